// reports/html/html_style.cpp — the report's style sheet (inline in the one file: no network).
#include "reports/html/html_parts.hpp"

namespace fpcert::html {

const char* report_css() {
  return R"CSS(
:root{--ok:#1a7f37;--okbg:#e8f5ec;--bad:#b42318;--badbg:#fdecea;--ns:#6b7280;--line:#d8dde3;--muted:#5b6470;--code:#f4f6f8}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1c2128;background:#fff}
main{max-width:1180px;margin:0 auto;padding:0 16px 40px}
h1{font-size:20px;margin:0 0 4px}
h2{font-size:19px;margin:34px 0 8px;padding-top:10px;border-top:2px solid var(--line)}
h3{font-size:16px;margin:22px 0 8px}
h4{font-size:14.5px;margin:16px 0 6px}
h5{font-size:13.5px;margin:10px 0 6px}
p{margin:6px 0}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
code{background:var(--code);padding:1px 4px;border-radius:3px;word-break:break-word}
pre{background:var(--code);padding:8px 10px;border-radius:4px;overflow-x:auto;white-space:pre-wrap;word-break:break-all;margin:6px 0}
pre code{padding:0;background:none}
a{color:#0a58ca}
.banner{padding:14px 16px;border-radius:0 0 8px 8px;margin:0 0 12px}
.banner.ok{background:var(--okbg);border:1px solid #9bd3ab;border-top:none}
.banner.bad{background:var(--badbg);border:1px solid #f0a7a0;border-top:none}
.verdict{font-size:26px;font-weight:800;letter-spacing:.04em}
.ok .verdict,.okt{color:var(--ok)}
.bad .verdict,.badt{color:var(--bad)}
.banner ul{margin:6px 0 0;padding-left:20px}
.banner li{margin:2px 0}
.muted{color:var(--muted)}
.na{color:#9aa3ad}
nav.toc{font-size:13px;margin:8px 0 0}
nav.toc a{margin-right:12px;white-space:nowrap}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;max-width:100%;border:1px solid var(--line);border-radius:6px;margin:6px 0 10px}
table{border-collapse:collapse;width:100%;font-size:12.5px}
th,td{padding:4px 7px;border-bottom:1px solid #edf0f3;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600;white-space:nowrap;position:sticky;top:0}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.case{white-space:nowrap;font-weight:600}
dl.env{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,270px),1fr));gap:0 14px;margin:6px 0 10px;border:1px solid var(--line);border-radius:6px;padding:6px 10px}
dl.env div{padding:3px 0;border-bottom:1px solid #f0f2f4;min-width:0}
dl.env div.wide{grid-column:1/-1}
dl.env dt{font-size:11.5px;color:var(--muted)}
dl.env dd{margin:0;word-break:break-word}
.badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:11.5px;font-weight:700;text-transform:uppercase}
.badge.pass{background:var(--okbg);color:var(--ok)}
.badge.fail{background:var(--badbg);color:var(--bad)}
.badge.ns{background:#eef0f2;color:var(--ns)}
.flag{color:#9a6700;font-weight:700;cursor:help}
.gf{display:inline-block;width:44px;height:7px;background:#eef0f2;border-radius:4px;margin-left:6px;vertical-align:middle;overflow:hidden}
.gf>span{display:block;height:100%;background:#2f81f7}
.gf.over>span{background:var(--bad)}
.failure{border:1px solid #f0a7a0;border-left:5px solid var(--bad);border-radius:6px;padding:8px 12px;margin:10px 0;background:#fffafa}
.failure h4{margin-top:4px}
.gate{border:1px solid var(--line);border-radius:6px;padding:6px 12px;margin:8px 0;break-inside:avoid}
.gates{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,460px),1fr));gap:0 12px}
.gate pre{font-size:11.5px}
.gate .eq{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,520px),1fr));gap:14px}
.figs.small{grid-template-columns:repeat(auto-fill,minmax(min(100%,330px),1fr))}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:6px;break-inside:avoid;background:#fff}
figure svg{width:100%;height:auto;display:block}
figcaption{font-size:12px;color:var(--muted);margin:4px 4px 2px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0}
dl.kv dt{color:var(--muted)}
dl.kv dd{margin:0;word-break:break-word}
details.failed{margin:6px 0 0}
details.failed>summary{cursor:pointer}
section.overview h2{border-top:none;margin-top:10px;padding-top:0}
table.matrix td{vertical-align:middle;white-space:nowrap}
table.matrix td.verdict-cell a{text-decoration:none}
table.matrix td.verdict-cell.bad{background:#fff6f5}
.tier{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
details.fold{border:1px solid var(--line);border-radius:6px;padding:4px 10px;margin:8px 0}
details.fold>summary{cursor:pointer;font-weight:600;color:#0a58ca}
.mapbox{display:grid;grid-template-columns:minmax(0,520px) minmax(0,1fr);gap:12px;align-items:start;margin:8px 0}
.mapside{font-size:13px}
ol.worstlist{margin:4px 0;padding-left:22px}
table.diff td.grew,table.diff td.bad{color:var(--bad);font-weight:600}
table.diff td.better{color:var(--ok);font-weight:600}
footer{margin-top:36px;font-size:12px;color:var(--muted);border-top:1px solid var(--line);padding-top:8px}
@media (max-width:640px){
  body{font-size:13.5px}
  main{padding:0 8px 30px}
  .verdict{font-size:22px}
  th,td{padding:3px 5px}
  .figs,.figs.small{grid-template-columns:1fr}
  .mapbox{grid-template-columns:1fr}
  dl.kv{grid-template-columns:1fr}
  dl.kv dt{margin-top:4px}
}
@media print{
  @page{margin:12mm}
  body{font-size:10.5pt;-webkit-print-color-adjust:exact;print-color-adjust:exact}
  main{max-width:none;padding:0}
  nav.toc{display:none}
  .scroll{overflow:visible;border:none}
  table{font-size:8.5pt}
  th{position:static}
  h2{break-before:page}
  section.run:first-of-type h2,section.conv:first-of-type h2{break-before:auto}
  h2,h3,h4{break-after:avoid}
  figure,.failure,.gate,tr{break-inside:avoid}
  details.fold{display:block}
  .figs,.figs.small{grid-template-columns:1fr 1fr}
  a{color:inherit;text-decoration:none}
  pre{white-space:pre-wrap}
}
)CSS";
}

}  // namespace fpcert::html
