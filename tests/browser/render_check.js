// Injected by chart_render_test.cpp before </body> of a placesim page, run by headless Chromium.
// Checks every inline <svg>: (1) no <text>'s box leaves the SVG's viewBox; (2) no legend lies
// over a plot area; (3) no two legend entries with a marker share (colour, marker); (4) every
// legend entry's series is drawn: an element outside the legend with its data-series, with a
// non-empty box inside the viewBox, displayed, and the topmost element at some point of its
// outline (so no other series hides it). Writes the result into <pre id="render-check">:
// "texts N", "series N", then one "FAIL ..." line per problem.
(function () {
  const failures = [];
  let texts = 0, series = 0;
  const overlaps = (a, b) => a.x0 < b.x1 && a.x1 > b.x0 && a.y0 < b.y1 && a.y1 > b.y0;
  for (const svg of document.querySelectorAll('svg')) {
    const name = svg.id || 'svg';
    const vb = svg.viewBox.baseVal;
    const view = {x0: vb.x - 0.5, y0: vb.y - 0.5, x1: vb.x + vb.width + 0.5, y1: vb.y + vb.height + 0.5};
    // An element's box in the SVG's user units (its transforms, e.g. a rotated label, applied).
    const boxOf = (el) => {
      const b = el.getBBox();
      const m = svg.getScreenCTM().inverse().multiply(el.getScreenCTM());
      const corners = [[b.x, b.y], [b.x + b.width, b.y], [b.x, b.y + b.height], [b.x + b.width, b.y + b.height]]
        .map(([x, y]) => new DOMPoint(x, y).matrixTransform(m));
      const xs = corners.map((p) => p.x), ys = corners.map((p) => p.y);
      return {x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys)};
    };
    for (const text of svg.querySelectorAll('text')) {
      ++texts;
      const b = boxOf(text);
      if (b.x0 < view.x0 || b.y0 < view.y0 || b.x1 > view.x1 || b.y1 > view.y1) {
        failures.push('FAIL text leaves #' + name + ' viewBox: "' + text.textContent + '" x ' + b.x0.toFixed(1) + '..' +
                      b.x1.toFixed(1) + ' y ' + b.y0.toFixed(1) + '..' + b.y1.toFixed(1));
      }
    }
    const plots = [...svg.querySelectorAll('rect.plot-area')].map(boxOf);
    for (const legend of svg.querySelectorAll('g.legend')) {
      if (plots.some((p) => overlaps(boxOf(legend), p))) failures.push('FAIL legend over a plot area in #' + name);
    }
    const styles = new Map();
    for (const entry of svg.querySelectorAll('g.legend-entry')) {
      ++series;
      const id = entry.getAttribute('data-series');
      if (entry.querySelector('path')) {
        const style = entry.getAttribute('data-color') + ' ' + entry.getAttribute('data-marker');
        if (styles.has(style)) failures.push('FAIL #' + name + ': "' + id + '" has the style of "' + styles.get(style) + '"');
        styles.set(style, id);
      }
      const drawn = [...svg.querySelectorAll('[data-series]')].filter(
        (el) => !el.closest('g.legend') && el.getAttribute('data-series') === id);
      if (drawn.length === 0) { failures.push('FAIL #' + name + ': series "' + id + '" has no element'); continue; }
      const shown = drawn.filter((el) => {
        const style = getComputedStyle(el);
        if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return false;
        const b = boxOf(el);
        return b.x1 - b.x0 + (b.y1 - b.y0) > 0 && overlaps(b, view);
      });
      if (shown.length === 0) { failures.push('FAIL #' + name + ': series "' + id + '" is not visible'); continue; }
      const onTop = shown.some((el) => {
        el.scrollIntoView({block: 'center', inline: 'center'});
        const m = el.getScreenCTM();
        const samples = [];
        if (el.getTotalLength) {
          const length = el.getTotalLength();
          for (let k = 0; k < 16; ++k) samples.push(el.getPointAtLength(length * k / 16));
        }
        const b = el.getBBox();
        samples.push(new DOMPoint(b.x + b.width / 2, b.y + b.height / 2));
        return samples.some((p) => {
          const q = new DOMPoint(p.x, p.y).matrixTransform(m);
          const hit = document.elementFromPoint(q.x, q.y);
          return hit && (hit === el || el.contains(hit));
        });
      });
      if (!onTop) failures.push('FAIL #' + name + ': series "' + id + '" is hidden under other elements');
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'render-check';
  pre.textContent = ['texts ' + texts, 'series ' + series].concat(failures).join('\n');
  document.body.appendChild(pre);
})();
