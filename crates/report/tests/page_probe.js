// What a reader sees of a page kvlab writes, read in the browser after layout (appended
// to a copy of the page by the tests: crates/report/tests/browser.rs and
// crates/cli/tests/common/browser.rs). It writes a JSON summary into the pre element
// with id kvlab-probe: every piece of text with the size it is drawn at (an SVG's
// text scaled as the page scales the SVG), and per chart (svg.chart) what it draws —
// points, squares, bar corners, line vertices — and which of them lie outside its
// plotted area (rect.plot).
(function () {
  function num(v) { return parseFloat(v); }
  function rendered(el) {
    var m = el.getScreenCTM();
    var scale = m ? Math.sqrt(m.a * m.a + m.b * m.b) : 1;
    return num(getComputedStyle(el).fontSize) * scale;
  }
  var out = { texts: [], charts: [] };
  // Every SVG text, and every HTML element with text of its own.
  document.querySelectorAll('svg text').forEach(function (t) {
    if (!t.textContent.trim()) return;
    out.texts.push({ text: t.textContent.slice(0, 80), px: rendered(t) });
  });
  document.querySelectorAll('body *').forEach(function (e) {
    if (e.closest('svg') || e.tagName === 'SCRIPT' || e.tagName === 'STYLE') return;
    var own = Array.prototype.some.call(e.childNodes, function (n) {
      return n.nodeType === 3 && n.textContent.trim();
    });
    if (!own || e.getClientRects().length === 0) return;
    out.texts.push({ text: e.textContent.trim().slice(0, 80), px: num(getComputedStyle(e).fontSize) });
  });
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var chart = { title: svg.getAttribute('aria-label') || '', drawn: 0, outside: [] };
    var plot = svg.querySelector('rect.plot');
    chart.has_plot = !!plot;
    var box = plot && {
      x0: num(plot.getAttribute('x')) - 1, y0: num(plot.getAttribute('y')) - 1,
      x1: num(plot.getAttribute('x')) + num(plot.getAttribute('width')) + 1,
      y1: num(plot.getAttribute('y')) + num(plot.getAttribute('height')) + 1
    };
    function check(what, x, y) {
      chart.drawn++;
      if (box && !(x >= box.x0 && x <= box.x1 && y >= box.y0 && y <= box.y1)) {
        chart.outside.push(what + ' at ' + x.toFixed(1) + ',' + y.toFixed(1));
      }
    }
    svg.querySelectorAll('circle').forEach(function (c) {
      if (c.closest('.legend')) return;
      check('point', num(c.getAttribute('cx')), num(c.getAttribute('cy')));
    });
    svg.querySelectorAll('rect.measured').forEach(function (r) {
      check('square', num(r.getAttribute('x')) + 5, num(r.getAttribute('y')) + 5);
    });
    svg.querySelectorAll('rect.bar').forEach(function (r) {
      var x = num(r.getAttribute('x')), y = num(r.getAttribute('y'));
      check('bar', x, y);
      check('bar', x + num(r.getAttribute('width')), y + num(r.getAttribute('height')));
    });
    svg.querySelectorAll('path.series').forEach(function (p) {
      var n = (p.getAttribute('d') || '').match(/-?[0-9.]+(e-?[0-9]+)?/g) || [];
      for (var i = 0; i + 1 < n.length; i += 2) check('line', num(n[i]), num(n[i + 1]));
    });
    out.charts.push(chart);
  });
  var pre = document.createElement('pre');
  pre.id = 'kvlab-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
