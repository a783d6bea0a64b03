// Many HTTP GET requests at once over libcurl's multi interface, for the Hub fetch (hub_fetch.cpp).
//
// Redirects are followed here, not by libcurl, so that the token goes to the token's origin only:
// a request (or a redirect) to any other scheme, host or port is sent without it. Every request has
// the client's timeout (connection included) and a cap on the body it accepts; nothing here throws
// for a failed request — the response says what happened and the caller words the error.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpubudget::detail {

struct HttpRequest {
  std::string url;
  std::optional<std::int64_t> range_begin;  // with range_end: "Range: bytes=begin-end" (inclusive)
  std::int64_t range_end = 0;
  std::int64_t max_body = 0;  // a longer body fails with kTooLarge; with a range, a 200 answer is cut
                              // at the range's length instead (stopped_early)
};

enum class HttpFailure {
  kNone,          // a response arrived (any status)
  kUnreachable,   // DNS, connection refused, proxy
  kTls,           // certificate or handshake
  kTimeout,       // the request took longer than the client's timeout
  kTooLarge,      // the body exceeded max_body
  kTruncated,     // the connection closed before the body the headers announced
  kTooManyRedirects,
  kBadRedirect,   // a Location that is no http(s) URL
  kOther,
};

struct HttpResponse {
  HttpFailure failure = HttpFailure::kNone;
  std::string failure_text;          // libcurl's words for a failure
  long status = 0;                   // of the last response, after redirects
  std::string url;                   // the URL the last response came from
  std::map<std::string, std::string> headers;  // of the last response; names in lower case
  std::string body;
  bool stopped_early = false;        // a 200 answer to a range request, cut at the range's length

  [[nodiscard]] std::string header(const std::string& lower_case_name) const {
    const auto at = headers.find(lower_case_name);
    return at == headers.end() ? std::string() : at->second;
  }
};

class HttpClient {
 public:
  // `token` is sent as "Authorization: Bearer" to URLs of `token_origin`'s scheme, host and port only.
  HttpClient(std::string token_origin, std::string token, std::chrono::milliseconds timeout, int max_parallel = 64);

  // What to do when request `i` has its response `r`: nothing more (nullopt), or a follow-up request
  // for the same item, started at once (its response comes to the callback as item `i` again).
  using OnDone = std::function<std::optional<HttpRequest>(std::size_t i, const HttpResponse& r)>;

  // Performs `requests` concurrently and returns each item's last response, in the same order.
  // `on_done` runs on the calling thread as each response completes; it must not throw.
  std::vector<HttpResponse> fetch_all(const std::vector<HttpRequest>& requests, const OnDone& on_done = {});

 private:
  std::string token_origin_;
  std::string token_;
  std::chrono::milliseconds timeout_;
  int max_parallel_;
};

// "scheme://host:port" of an http(s) URL, the port explicit; "" when `url` is no http(s) URL.
std::string url_origin(const std::string& url);
// `location` (absolute or relative) resolved against `base`; "" when the result is no http(s) URL.
std::string resolve_url(const std::string& base, const std::string& location);
// Percent-encodes every byte except unreserved ones (A-Z a-z 0-9 - . _ ~): a revision in a URL path.
std::string percent_encode(const std::string& text);

}  // namespace gpubudget::detail
