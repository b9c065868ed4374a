// Appended, inside the same module, to PyTorch's MemoryViz.js in a page that
// tests/cli_memoryviz.sh builds: loads gpusim's export (window.PROBE.base64) the way
// the viewer's own pages do (add_local_files, as _memory_viz.py's trace_plot and
// segment_plot pages call it), in each of the viewer's views, and writes "OK ..." /
// "FAIL ..." lines into the pre element with id "probe", ending with "DONE".
{
  const probe = window.PROBE;
  const out = [];
  const say = (ok, what) => out.push((ok ? 'OK ' : 'FAIL ') + what);
  const tick = ms => new Promise(r => setTimeout(r, ms));
  // a frame, or 100 ms where headless Chromium draws none
  const frame = () => Promise.race([new Promise(r => requestAnimationFrame(() => r())), tick(100)]);
  // the <div> the viewer made for the newest selection (each add_local_files appends one)
  const newest = () => {
    const divs = Array.from(document.body.children).filter(e => e.tagName === 'DIV');
    return divs[divs.length - 1];
  };
  const run = async () => {
    for (const view of probe.views) {
      const before = window.PROBE_ERRORS.length;
      add_local_files([{name: probe.name, base64: probe.base64}], view);
      await frame();
      await tick(50);
      await frame();
      const errs = window.PROBE_ERRORS.slice(before);
      say(errs.length === 0, `view '${view}' ran without a script error${errs.length ? ': ' + errs.join('; ') : ''}`);
      const div = newest();
      const svgs = div ? div.querySelectorAll('svg').length : 0;
      const drawn = div ? div.querySelectorAll('rect, path, polygon').length : 0;
      if (view === 'Allocator Settings') {
        say(div && div.textContent.length > 0, `view '${view}' shows the settings`);
      } else if (view !== 'Allocator State History') {
        say(svgs > 0 && drawn > 0, `view '${view}' drew ${svgs} svg with ${drawn} shapes`);
      }
      if (view === 'Allocator State History') {
        // the event list: one <pre> per trace entry; the stack box is the <pre> spanning
        // the grid's second row
        const lines = Array.from(div.querySelectorAll('pre')).filter(p => !/grid-row: 2/.test(p.getAttribute('style') || ''));
        const box = Array.from(div.querySelectorAll('pre')).find(p => /grid-row: 2/.test(p.getAttribute('style') || ''));
        say(lines.length === probe.entries, `the history lists ${lines.length} entries (the export has ${probe.entries})`);
        const target = probe.oom
          ? lines.find(p => p.textContent.startsWith('OOM (requested'))
          : lines[lines.length - 1];
        if (!target || !box) {
          say(false, probe.oom ? 'the history shows the OOM entry' : 'the history shows its last entry');
          continue;
        }
        target.dispatchEvent(new MouseEvent('mousedown', {bubbles: true}));
        await frame();
        const text = box.textContent;
        // the state it drew there: segments and blocks, when anything was reserved
        const shapes = div.querySelectorAll('rect').length;
        say(probe.reserved === 0 || shapes > 0, `view '${view}' drew ${shapes} segments and blocks at the OOM`);
        const want = [`(${probe.allocated} bytes) allocated / `, `(${probe.reserved} bytes) reserved)`];
        if (probe.oom) {
          want.push(`OOM (requested `, `(${probe.oom.size} bytes), CUDA has `, `(${probe.oom.device_free} bytes) memory free)`);
        }
        const missing = want.filter(w => !text.includes(w));
        say(missing.length === 0, `${probe.oom ? 'at the OOM' : 'at the end'} the viewer says ` +
            JSON.stringify(text.split('\n').slice(0, 2).join(' | ')) +
            (missing.length ? ', lacking ' + JSON.stringify(missing) : ''));
      }
    }
    for (const e of window.PROBE_ERRORS) say(false, 'script error: ' + e);
    out.push('DONE');
    const pre = document.createElement('pre');
    pre.id = 'probe';
    pre.textContent = out.join('\n');
    document.body.appendChild(pre);
  };
  run().catch(e => {
    const pre = document.createElement('pre');
    pre.id = 'probe';
    pre.textContent = 'FAIL the probe threw: ' + e + '\nDONE';
    document.body.appendChild(pre);
  });
}
