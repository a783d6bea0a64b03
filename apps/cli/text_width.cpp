#include "text_width.h"

#include <sstream>
#include <vector>

namespace gpubudget::cli {

namespace {

// Columns of UTF-8 text: one per character (continuation bytes 10xxxxxx are not counted).
std::size_t columns_of(const std::string& text) {
  std::size_t columns = 0;
  for (const char c : text) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return columns;
}

// `word` cut into pieces of at most `room` columns: after its last '/' that fits (a path reads as
// directories), else at the last character that fits. room 0 keeps the word whole.
std::vector<std::string> pieces_of(const std::string& word, std::size_t room) {
  std::vector<std::string> pieces;
  std::string rest = word;
  while (room > 0 && columns_of(rest) > room) {
    std::size_t end = 0;  // byte offset just past `room` characters
    for (std::size_t n = 0; end < rest.size() && n < room; ++n) {
      ++end;
      while (end < rest.size() && (static_cast<unsigned char>(rest[end]) & 0xC0) == 0x80) ++end;
    }
    const std::size_t slash = rest.rfind('/', end - 1);
    const std::size_t cut = slash != std::string::npos && slash > 0 ? slash + 1 : end;
    pieces.push_back(rest.substr(0, cut));
    rest.erase(0, cut);
  }
  pieces.push_back(rest);
  return pieces;
}

}  // namespace

std::string wrap_paragraph(const std::string& text, std::size_t indent, std::size_t width) {
  std::string out;
  std::string line;
  std::istringstream words(text);
  const std::size_t room = width > indent ? width - indent : 0;
  for (std::string word; words >> word;) {
    for (const std::string& piece : pieces_of(word, room)) {
      if (!line.empty() && indent + columns_of(line) + 1 + columns_of(piece) > width) {
        out += std::string(indent, ' ') + line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + piece;
    }
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

std::string wrap_long_lines(const std::string& text, std::size_t width) {
  if (width == 0) return text;
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (columns_of(line) <= width) {
      out += line + "\n";
      continue;
    }
    const std::size_t own = line.find_first_not_of(' ');
    const std::size_t indent = own == std::string::npos ? 0 : own;
    // A verdict stays whole with its arrow ("-> DOES NOT FIT" is one word here).
    for (std::size_t at = line.find("-> "); at != std::string::npos; at = line.find("-> ", at)) line[at + 2] = '\x01';
    for (std::size_t at = line.find("DOES NOT FIT"); at != std::string::npos; at = line.find("DOES NOT FIT", at)) {
      line[at + 4] = '\x01';
      line[at + 8] = '\x01';
    }
    for (std::size_t at = line.find("GENERIC ESTIMATE"); at != std::string::npos; at = line.find("GENERIC ESTIMATE", at)) {
      line[at + 7] = '\x01';  // the label of an estimate stays whole
    }
    // The first line keeps its text up to the last space that fits, or ends at a clause (": ") when
    // the rest then fits on one line; the rest is a paragraph.
    std::size_t cut = line.rfind(' ', width);
    const std::size_t clause = line.rfind(": ", width);
    const bool verdict = line.find("->\x01") != std::string::npos;
    if (verdict && clause != std::string::npos && clause > indent &&
        indent + 4 + columns_of(line.substr(clause + 2)) <= width) {
      cut = clause + 1;
    }
    while (cut != std::string::npos && cut > indent && line[cut - 1] == ' ') --cut;  // not inside a column gap
    if (cut == std::string::npos || cut <= indent) {
      out += line + "\n";
      continue;
    }
    std::string wrapped = line.substr(0, cut) + "\n" + wrap_paragraph(line.substr(cut), indent + 4, width);
    for (char& c : wrapped) {
      if (c == '\x01') c = ' ';
    }
    out += wrapped;
  }
  if (!text.empty() && text.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

}  // namespace gpubudget::cli
