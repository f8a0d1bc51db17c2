// reports/escape.cpp — see escape.hpp.
#include "reports/escape.hpp"

namespace fpcert {

std::string xml_escape(std::string_view s, ControlChars control) {
  std::string r;
  r.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': r += "&amp;"; break;
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '"': r += "&quot;"; break;
      case '\'': r += "&#39;"; break;
      case '\n':
      case '\t': r += ch; break;
      case '\r':
        if (control == ControlChars::Replace) r += ch;
        break;
      default:
        if (static_cast<unsigned char>(ch) >= 0x20) r += ch;
        else if (control == ControlChars::Replace) r += '?';
    }
  }
  return r;
}

}  // namespace fpcert
