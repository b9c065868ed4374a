/* The HTML report's style sheet and script (html_script.h). The script reads what the
 * page already says: each SVG <title> becomes its parent's data-tip (so the browser's
 * own tooltip does not double the page's), and a zoomable chart's data-x0, data-pw,
 * data-xmin, data-xmax and data-unit give the plot's left edge, its width and the
 * axis range, to name the range a brush selects. */
#include "html_script.h"

#include "html_draw.h"

const char html_css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#222;margin:24px auto;"
    "max-width:1000px;padding:0 12px;background:#fff}\n"
    "h1{font-size:22px;margin:0 0 4px;overflow-wrap:anywhere}h2{font-size:18px;margin:28px 0 6px;"
    "border-bottom:1px solid #ddd}h3{font-size:15px;margin:18px 0 4px}\n"
    ".meta{color:#555;margin:2px 0;overflow-wrap:anywhere}.note{color:#666;font-size:12px}\n"
    ".table-wrap{overflow-x:auto;max-width:100%}\n"
    "table{border-collapse:collapse;margin:8px 0}th,td{padding:3px 8px;border-bottom:1px solid #e4e4e4;"
    "text-align:left}th{background:#f4f4f4;font-weight:600}td.num{text-align:right;font-variant-numeric:"
    "tabular-nums}.top td{white-space:nowrap}.top "
    "td.trace{white-space:normal;overflow-wrap:anywhere}.oom-cell{color:" COLOR_LIMIT ";font-weight:600}\n"
    "svg{display:block;margin:6px 0;overflow:visible;max-width:100%;height:auto}\n"
    "svg .axis{stroke:#444;stroke-width:1}svg .tick{stroke:#444}svg .grid{stroke:#e8e8e8;stroke-width:1}\n"
    "svg text{font:11px system-ui,sans-serif;fill:#333}svg .axis-label{font-size:12px;font-weight:600}\n"
    "svg .legend{font-size:12px}svg .series{fill-opacity:.28;stroke-width:1.2}\n"
    "svg .capacity{stroke:" COLOR_LIMIT ";stroke-dasharray:6 4;stroke-width:1.5}svg .capacity-label{fill:" COLOR_LIMIT
    "}\n"
    "svg .oom-line{stroke:" COLOR_LIMIT ";stroke-width:2}svg .oom-label{fill:" COLOR_LIMIT ";font-weight:700}\n"
    "svg .mark-line{stroke:#999;stroke-dasharray:2 3}svg .mark-tick{stroke:#999;stroke-width:1.5}"
    "svg .mark-label{font-size:10px;fill:#666}svg .lane-label{font-size:10px;font-weight:600}\n"
    "svg .region-outline{fill:none;stroke:#555;stroke-width:.8}svg .blk{shape-rendering:crispEdges}\n"
    "svg .col{fill:#000;fill-opacity:0}svg .col:hover{fill-opacity:.06}\n"
    "svg .brush{fill:" COLOR_REQUESTED ";fill-opacity:.15;stroke:" COLOR_REQUESTED ";display:none}\n"
    "svg .zoom *{vector-effect:non-scaling-stroke}svg.zoomed .zoom text,svg.zoomed .x-ticks{display:none}\n"
    "svg .zoom-note{font-size:11px;fill:#555}\n"
    "svg .on-dark{fill:#fff}.what-if{font-weight:600}.what-if-fixes{color:#1b7a34}\n"
    ".tip{position:absolute;z-index:10;max-width:440px;padding:4px 7px;border-radius:3px;background:#222;"
    "color:#fff;font-size:12px;line-height:1.35;pointer-events:none;white-space:normal}\n";

const char html_js[] =
    "(function(){'use strict';\n"
    "var d=document,tip=d.createElement('div');tip.className='tip';tip.id='tip';tip.hidden=true;"
    "d.body.appendChild(tip);\n"
    "d.querySelectorAll('svg title').forEach(function(t){var p=t.parentNode;"
    "if(p.nodeName.toLowerCase()==='svg')return;p.setAttribute('data-tip',t.textContent);p.removeChild(t);});\n"
    "function place(e){var w=tip.offsetWidth,x=e.pageX+14,y=e.pageY+14;"
    "if(x+w>window.scrollX+d.documentElement.clientWidth-4)x=Math.max(window.scrollX+4,e.pageX-14-w);"
    "tip.style.left=x+'px';tip.style.top=y+'px';}\n"
    "d.addEventListener('mouseover',function(e){var el=e.target.closest&&e.target.closest('[data-tip]');"
    "if(!el){tip.hidden=true;return;}tip.textContent=el.getAttribute('data-tip');tip.hidden=false;place(e);});\n"
    "d.addEventListener('mousemove',function(e){if(!tip.hidden)place(e);});\n"
    "d.querySelectorAll('svg[data-zoom]').forEach(function(s){\n"
    "var x0=+s.dataset.x0,pw=+s.dataset.pw,g=s.querySelector('.zoom'),br=s.querySelector('.brush'),"
    "note=s.querySelector('.zoom-note'),start=null,k=1,off=0;\n"
    "function sx(e){var r=s.getBoundingClientRect();return (e.clientX-r.left)*s.viewBox.baseVal.width/r.width;}\n"
    "function clamp(x){return Math.max(x0,Math.min(x0+pw,x));}\n"
    "s.addEventListener('mousedown',function(e){var x=sx(e);if(x<x0||x>x0+pw)return;start=x;"
    "br.setAttribute('x',x);br.setAttribute('width',0);br.style.display='inline';e.preventDefault();});\n"
    "s.addEventListener('mousemove',function(e){if(start===null)return;var x=clamp(sx(e));"
    "br.setAttribute('x',Math.min(x,start));br.setAttribute('width',Math.abs(x-start));});\n"
    "window.addEventListener('mouseup',function(){if(start===null)return;start=null;br.style.display='none';"
    "var a=+br.getAttribute('x'),w=+br.getAttribute('width');if(w<3)return;\n"
    "var o0=off+(a-x0)/k,o1=o0+w/k;k=pw/(o1-o0);off=o0;\n"
    "g.setAttribute('transform','translate('+x0+' 0) scale('+k+' 1) translate('+(-(x0+off))+' 0)');"
    "s.classList.add('zoomed');\n"
    "var lo=+s.dataset.xmin,hi=+s.dataset.xmax,at=function(o){return Math.round(lo+(hi-lo)*o/pw);};\n"
    "note.textContent='zoomed to '+s.dataset.unit+' '+at(o0)+' to '+at(o1)+' (double-click to go back)';});\n"
    "s.addEventListener('dblclick',function(){k=1;off=0;g.removeAttribute('transform');"
    "s.classList.remove('zoomed');note.textContent='';});\n"
    "});})();\n";
