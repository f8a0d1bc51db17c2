// reports/escape.hpp — the one escaper for text in XML and HTML output (JUnit XML, the HTML report,
// its inline SVG).
//
// & < > " ' become entities everywhere (&#39; for ', valid in XML 1.0 and HTML alike). The two
// outputs differ only in the control characters below 0x20 other than tab, newline and carriage
// return, which XML 1.0 does not allow in a document at all (not even as character references):
//   ControlChars::Drop     (HTML, SVG) they are removed — nothing shows where there was nothing to see;
//   ControlChars::Replace  (JUnit)     each becomes '?', so a CI log shows that the message held one.
// HTML also drops carriage return (a bare CR in a report line serves no one); JUnit keeps it.
#pragma once

#include <string>
#include <string_view>

namespace fpcert {

enum class ControlChars { Drop, Replace };

std::string xml_escape(std::string_view s, ControlChars control);

/// The report's and the SVG plots' escaping: xml_escape(s, ControlChars::Drop).
inline std::string html_escape(std::string_view s) { return xml_escape(s, ControlChars::Drop); }

}  // namespace fpcert
