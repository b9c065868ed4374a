/* The report's interactive checks, run in headless Chromium by tests/cli_browser.sh:
 * appended to a copy of a report after its own script, it writes one line per check
 * ("OK name" or "FAIL name: why") into <pre id="probe">, which the test reads from
 * --dump-dom. window.PROBE_EXPECT names what this report must show: named (a block
 * of the top table's first allocation to hover), lanes (processes with marks), ooms
 * (the strategies whose OOM the side-by-side chart must mark). */
(function(){
var out=[],d=document,want=window.PROBE_EXPECT||{};
function ok(n){out.push('OK '+n);}
function bad(n,why){out.push('FAIL '+n+': '+why);}
function check(n,c,why){if(c)ok(n);else bad(n,why);}
var W=d.documentElement.clientWidth;
// labels at this window width: every text of every picture inside the viewport
var texts=d.querySelectorAll('svg text'),outside=[];
texts.forEach(function(t){if(!t.textContent.trim())return;var r=t.getBoundingClientRect();
 if(r.width===0)return;if(r.left<0||r.right>W+0.5)outside.push(t.textContent+' ['+Math.round(r.left)+','+Math.round(r.right)+']');});
check('labels-inside',outside.length===0,outside.length+' labels outside 0..'+W+': '+outside.slice(0,5).join('; '));
var wide=[];d.querySelectorAll('table,svg,h1,p').forEach(function(e){var r=e.getBoundingClientRect();if(r.right>W+0.5)wide.push(e.nodeName+' '+e.className+' '+Math.round(r.right));});
check('boxes-inside',wide.length===0,wide.join('; '));
// one colour per meaning: every requested band alike, the map's used blocks in the
// same colour, every legend name one colour, strategies' lines apart from the series
var req=new Set(),sw={},sem=new Set();
d.querySelectorAll('path.series.requested').forEach(function(p){req.add(p.getAttribute('fill'));});
d.querySelectorAll('path.series.reserved:not([class*="strategy-"]),path.series.allocated,path.series.fragmentation')
 .forEach(function(p){sem.add(p.getAttribute('stroke'));});
req.forEach(function(c){sem.add(c);});
d.querySelectorAll('rect.swatch').forEach(function(r){var t=r.nextElementSibling;if(t)(sw[t.textContent]=sw[t.textContent]||new Set()).add(r.getAttribute('fill'));});
var used=sw['used (requested)']?Array.from(sw['used (requested)']):[];
check('colours-one-meaning',req.size<=1&&used.every(function(c){return req.has(c);})&&Object.keys(sw).every(function(k){return sw[k].size===1;}),
 'requested '+Array.from(req).join(',')+'; used '+used.join(','));
var strat={},clash=[];
d.querySelectorAll('svg.overlay path[class*="strategy-"]').forEach(function(p){var k=p.getAttribute('stroke')+' '+(p.getAttribute('stroke-dasharray')||'');
 if(sem.has(p.getAttribute('stroke'))||strat[k])clash.push(p.getAttribute('class'));strat[k]=1;});
check('strategy-colours-apart',clash.length===0,clash.join('; '));
function hover(el){var r=el.getBoundingClientRect(),x=r.left+r.width/2,y=r.top+r.height/2;
 el.dispatchEvent(new MouseEvent('mouseover',{bubbles:true,clientX:x,clientY:y}));
 el.dispatchEvent(new MouseEvent('mousemove',{bubbles:true,clientX:x,clientY:y}));}
var tip=d.getElementById('tip');
check('tooltip-exists',!!tip,'no #tip');
// hover the block of the largest live allocation the table lists (at the OOM or the peak)
var row=d.querySelector('table.top tbody tr');
if(row&&tip){var c=row.children,bytes=c[2].textContent,id=c[3].textContent,tag=c[4].textContent.replace(/ \(freed, pending\)$/,'');
 var blk=d.querySelector('g.block[data-tip*="allocation id '+id+','+'"]');
 if(!blk&&want.named)bad('hover-block','no block of allocation '+id);
 if(blk){hover(blk.querySelector('rect'));
  check('hover-block',!tip.hidden&&tip.textContent.indexOf('('+bytes+' B)')>=0&&tip.textContent.indexOf('tag '+tag)>=0&&tip.textContent.indexOf('requested ')>=0&&tip.textContent.indexOf('slack ')>=0&&tip.textContent.indexOf('stream ')>=0,
   'tooltip "'+tip.textContent+'" lacks '+bytes+' B / tag '+tag);
  var tr=tip.getBoundingClientRect();check('tooltip-inside',tr.left>=0&&tr.right<=W+0.5,'tooltip at '+tr.left+'..'+tr.right);}}
// hover a column of the memory timeline
var col=d.querySelector('svg.timeline rect.col');
if(col&&tip){hover(col);check('hover-column',!tip.hidden&&/^events? \d+/.test(tip.textContent)&&tip.textContent.indexOf('reserved ')>=0,'tooltip "'+tip.textContent+'"');}
// marks: one lane per process, every tick inside the plot's x range
var s=d.querySelector('svg.timeline');
if(s){var x0=+s.dataset.x0,pw=+s.dataset.pw,lanes={},badx=0;
 s.querySelectorAll('g.mark').forEach(function(g){var l=g.querySelector('line.mark-tick'),p=g.dataset.process;
  (lanes[p]=lanes[p]||{})[l.getAttribute('y1')]=1;var x=+l.getAttribute('x1');if(x<x0-0.05||x>x0+pw+0.05)badx++;});
 var ps=Object.keys(lanes),ys=ps.map(function(p){return Object.keys(lanes[p]).join('/');});
 check('lanes-count',!want.lanes||ps.length===want.lanes,ps.length+' lanes, want '+want.lanes);
 check('lanes-one-y-each',ys.every(function(y){return y.indexOf('/')<0;}),ys.join(' '));
 check('lanes-distinct',new Set(ys).size===ys.length,ys.join(' '));
 check('marks-in-plot',badx===0,badx+' ticks outside');
 // brush: drag across the plot from 100 to 300 px into it
 var r=s.getBoundingClientRect(),k=r.width/s.viewBox.baseVal.width,cy=r.top+(+s.querySelector('.brush').getAttribute('y')+20)*k;
 function at(t,x,tgt){(tgt||s).dispatchEvent(new MouseEvent(t,{bubbles:true,clientX:r.left+x*k,clientY:cy}));}
 at('mousedown',x0+100);at('mousemove',x0+300);at('mouseup',x0+300,window);
 var g=s.querySelector('g.zoom'),tf=g.getAttribute('transform')||'',note=s.querySelector('.zoom-note').textContent;
 var m=/scale\(([0-9.]+) 1\)/.exec(tf);
 check('brush-zooms',s.classList.contains('zoomed')&&m&&Math.abs(+m[1]-pw/200)<0.01&&/^zoomed to (events|t \(ns\)) \d+ to \d+/.test(note),'transform "'+tf+'", note "'+note+'"');
 s.dispatchEvent(new MouseEvent('dblclick',{bubbles:true}));
 check('dblclick-resets',!s.classList.contains('zoomed')&&!g.getAttribute('transform'),'still zoomed');}
// labels apart: within each picture no two texts' boxes intersect (a pixel of slack)
var clashes=[];
d.querySelectorAll('svg').forEach(function(svg){var bx=[];
 svg.querySelectorAll('text').forEach(function(t){if(!t.textContent.trim())return;var r=t.getBoundingClientRect();
  if(r.width===0||r.height===0)return;
  bx.forEach(function(o){if(r.left<o.r.right-1&&o.r.left<r.right-1&&r.top<o.r.bottom-1&&o.r.top<r.bottom-1)
   clashes.push('"'+o.t+'" / "'+t.textContent+'"');});
  bx.push({r:r,t:t.textContent});});});
check('labels-apart',clashes.length===0,clashes.length+' overlapping labels: '+clashes.slice(0,5).join('; '));
// side by side: each strategy's curve narrower than every one drawn before it, so a
// curve on top of another leaves it visible on both sides
var ov=d.querySelector('svg.overlay');
if(ov){var ws=[],nest=true;ov.querySelectorAll('path[class*="strategy-"]').forEach(function(p){ws.push(parseFloat(getComputedStyle(p).strokeWidth));});
 for(var i=1;i<ws.length;i++)if(!(ws[i]<ws[i-1]))nest=false;
 check('overlay-nested',nest&&ws.length>1,'stroke widths '+ws.join(', '));
 // every strategy that ran out of memory is marked there, in its colour, by name
 if(want.ooms){var miss=[];want.ooms.forEach(function(n){var g=Array.from(ov.querySelectorAll('g.strategy-oom')).filter(function(g){
   var t=g.querySelector('text');return t&&t.textContent.indexOf('OOM '+n+' (')===0;})[0];
  var path=ov.querySelector('path.strategy-'+n);
  if(!g||!path||getComputedStyle(g.querySelector('line')).stroke!==getComputedStyle(path).stroke)miss.push(n);});
  check('overlay-ooms',miss.length===0&&ov.querySelectorAll('g.strategy-oom').length===want.ooms.length,
   'not marked: '+miss.join(', ')+'; '+ov.querySelectorAll('g.strategy-oom').length+' marks');}}
var pre=d.createElement('pre');pre.id='probe';pre.textContent=out.join('\n');d.body.appendChild(pre);
})();
