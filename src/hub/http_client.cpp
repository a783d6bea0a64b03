#include "hub/http_client.h"

#include <deque>
#include <memory>
#include <mutex>

#include <curl/curl.h>
#include <fmt/format.h>

#include "gpubudget/version.h"

namespace gpubudget::detail {

namespace {

constexpr int kMaxRedirects = 10;

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlUrl {
  CURLU* handle = curl_url();
  CurlUrl() = default;
  CurlUrl(const CurlUrl&) = delete;
  CurlUrl& operator=(const CurlUrl&) = delete;
  ~CurlUrl() { curl_url_cleanup(handle); }

  [[nodiscard]] std::string part(CURLUPart which, unsigned flags = 0) const {
    char* text = nullptr;
    if (curl_url_get(handle, which, &text, flags) != CURLUE_OK || text == nullptr) return "";
    std::string out(text);
    curl_free(text);
    return out;
  }
};

bool is_http(const std::string& scheme) { return scheme == "http" || scheme == "https"; }

// One request in flight: its easy handle and what its callbacks collect.
struct Transfer {
  std::size_t index = 0;
  int redirects = 0;
  std::string url;
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  HttpResponse response;
  std::int64_t max_body = 0;
  std::int64_t cut_at = -1;  // a 200 answer to a range request keeps this many bytes
  bool too_large = false;
  std::map<std::string, std::string> carried;  // headers of the redirects that led here

  Transfer() = default;
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  ~Transfer() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    curl_slist_free_all(header_list);
  }
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  long status = 0;
  curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300 && status < 400) return bytes;  // a redirect's body is not kept
  const auto have = static_cast<std::int64_t>(t.response.body.size());
  if (status == 200 && t.cut_at >= 0 && have + static_cast<std::int64_t>(bytes) >= t.cut_at) {
    t.response.body.append(data, static_cast<std::size_t>(t.cut_at - have));
    t.response.stopped_early = true;
    return 0;  // ends the transfer: the rest of the file is not wanted
  }
  if (have + static_cast<std::int64_t>(bytes) > t.max_body) {
    t.too_large = true;
    return 0;
  }
  t.response.body.append(data, bytes);
  return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  std::string line(data, bytes);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a 100 Continue): start over
    t.response.headers.clear();
    return bytes;
  }
  const auto colon = line.find(':');
  if (colon == std::string::npos) return bytes;
  std::string name = line.substr(0, colon);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string value = line.substr(colon + 1);
  const auto first = value.find_first_not_of(" \t");
  const auto last = value.find_last_not_of(" \t\r\n");
  value = first == std::string::npos ? "" : value.substr(first, last - first + 1);
  t.response.headers[name] = value;
  return bytes;
}

HttpFailure classify(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
      return HttpFailure::kUnreachable;
    case CURLE_OPERATION_TIMEDOUT: return HttpFailure::kTimeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
      return HttpFailure::kTls;
    case CURLE_PARTIAL_FILE: return HttpFailure::kTruncated;
    default: return HttpFailure::kOther;
  }
}

}  // namespace

std::string url_origin(const std::string& url) {
  CurlUrl u;
  if (u.handle == nullptr || curl_url_set(u.handle, CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return "";
  const std::string scheme = u.part(CURLUPART_SCHEME);
  if (!is_http(scheme)) return "";
  return fmt::format("{}://{}:{}", scheme, u.part(CURLUPART_HOST), u.part(CURLUPART_PORT, CURLU_DEFAULT_PORT));
}

std::string resolve_url(const std::string& base, const std::string& location) {
  CurlUrl u;
  if (u.handle == nullptr || curl_url_set(u.handle, CURLUPART_URL, base.c_str(), 0) != CURLUE_OK ||
      curl_url_set(u.handle, CURLUPART_URL, location.c_str(), CURLU_ALLOW_SPACE) != CURLUE_OK) {
    return "";
  }
  if (!is_http(u.part(CURLUPART_SCHEME))) return "";
  return u.part(CURLUPART_URL);
}

std::string percent_encode(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

HttpClient::HttpClient(std::string token_origin, std::string token, std::chrono::milliseconds timeout, int max_parallel)
    : token_origin_(std::move(token_origin)), token_(std::move(token)), timeout_(timeout), max_parallel_(max_parallel) {
  global_init_once();
}

std::vector<HttpResponse> HttpClient::fetch_all(const std::vector<HttpRequest>& requests, const OnDone& on_done) {
  std::vector<HttpResponse> responses(requests.size());
  if (requests.empty()) return responses;
  const std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> multi(curl_multi_init(), &curl_multi_cleanup);
  if (!multi) {
    for (auto& r : responses) {
      r.failure = HttpFailure::kOther;
      r.failure_text = "libcurl could not start";
    }
    return responses;
  }
  curl_multi_setopt(multi.get(), CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(max_parallel_));
  curl_multi_setopt(multi.get(), CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(max_parallel_));
  const std::string user_agent = fmt::format("gpubudget/{}", kVersion);

  std::map<CURL*, std::unique_ptr<Transfer>> running;
  std::size_t finished = 0;
  std::vector<HttpRequest> current = requests;  // each item's request in flight (a follow-up replaces it)
  // Starts (or restarts, after a redirect) the transfer of item `index` at `url`.
  const auto start = [&](std::unique_ptr<Transfer> t) {
    const HttpRequest& request = current[t->index];
    t->easy = curl_easy_init();
    t->response = HttpResponse{};
    t->response.url = t->url;
    t->max_body = request.max_body;
    t->cut_at = request.range_begin ? request.range_end - *request.range_begin + 1 : -1;
    CURL* e = t->easy;
    curl_easy_setopt(e, CURLOPT_URL, t->url.c_str());
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_.count()));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout_.count()));
    curl_easy_setopt(e, CURLOPT_USERAGENT, user_agent.c_str());
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
    if (request.range_begin) {
      const std::string range = fmt::format("{}-{}", *request.range_begin, request.range_end);
      curl_easy_setopt(e, CURLOPT_RANGE, range.c_str());  // copied by libcurl
    }
    t->header_list = curl_slist_append(t->header_list, "Accept-Encoding: identity");
    if (!token_.empty() && url_origin(t->url) == token_origin_) {
      t->header_list = curl_slist_append(t->header_list, ("Authorization: Bearer " + token_).c_str());
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->header_list);
    curl_multi_add_handle(multi.get(), e);
    running.emplace(e, std::move(t));
  };
  const auto finish = [&](Transfer& t) {
    const std::size_t index = t.index;
    t.response.headers.insert(t.carried.begin(), t.carried.end());
    responses[index] = std::move(t.response);
    std::optional<HttpRequest> next = on_done ? on_done(index, responses[index]) : std::nullopt;
    if (!next) {
      ++finished;
      return;
    }
    current[index] = std::move(*next);
    auto follow_up = std::make_unique<Transfer>();
    follow_up->index = index;
    follow_up->url = current[index].url;
    start(std::move(follow_up));
  };
  for (std::size_t i = 0; i < requests.size(); ++i) {
    auto t = std::make_unique<Transfer>();
    t->index = i;
    t->url = requests[i].url;
    start(std::move(t));
  }
  while (finished < requests.size()) {
    int still_running = 0;
    curl_multi_perform(multi.get(), &still_running);
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi.get(), &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      CURL* e = message->easy_handle;
      const CURLcode code = message->data.result;
      curl_multi_remove_handle(multi.get(), e);
      auto node = running.extract(e);
      std::unique_ptr<Transfer> t = std::move(node.mapped());
      HttpResponse& r = t->response;
      curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r.status);
      if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && r.stopped_early)) {
        r.failure = t->too_large && code == CURLE_WRITE_ERROR ? HttpFailure::kTooLarge : classify(code);
        r.failure_text = curl_easy_strerror(code);
        finish(*t);
        continue;
      }
      if (r.status >= 300 && r.status < 400 && r.status != 304) {
        const std::string location = r.header("location");
        const std::string next = location.empty() ? "" : resolve_url(t->url, location);
        if (next.empty()) {
          r.failure = HttpFailure::kBadRedirect;
          r.failure_text = fmt::format("HTTP {} redirect to \"{}\"", r.status, location);
          finish(*t);
        } else if (t->redirects >= kMaxRedirects) {
          r.failure = HttpFailure::kTooManyRedirects;
          r.failure_text = fmt::format("more than {} redirects", kMaxRedirects);
          finish(*t);
        } else {
          // The redirect's own headers (the Hub's X-Repo-Commit, X-Linked-Size) reach the caller
          // under "redirect-" names.
          auto again = std::make_unique<Transfer>();
          again->index = t->index;
          again->redirects = t->redirects + 1;
          again->url = next;
          again->carried = std::move(t->carried);
          for (const auto& [name, value] : r.headers) again->carried["redirect-" + name] = value;
          start(std::move(again));
        }
        continue;
      }
      finish(*t);
    }
    if (finished < requests.size()) curl_multi_poll(multi.get(), nullptr, 0, 100, nullptr);
  }
  return responses;
}

}  // namespace gpubudget::detail
