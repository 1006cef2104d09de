/**
 * A small hand-written SVG line chart (no plotting dependency): latency on a
 * log scale against load (connections) on a log scale, one line per series,
 * with optional horizontal reference lines. Used by bench/run.js for the
 * GET /v1/me latency-against-load plot in docs/performance.md.
 */
'use strict';

const escape = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmt = (n) => Number(n.toFixed(1)).toString();

/**
 * @param {{
 *   title: string, subtitle?: string, xLabel: string, yLabel: string, note?: string,
 *   series: Array<{ label: string, color: string, dashed?: boolean, points: Array<[number, number]> }>,
 *   references?: Array<{ y: number, label: string }>
 * }} chart
 * @returns {string} SVG document
 */
function logLogChart(chart) {
  const width = 760;
  const height = 440;
  const margin = { left: 70, right: 200, top: chart.subtitle ? 62 : 44, bottom: chart.note ? 74 : 56 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const xs = chart.series.flatMap((s) => s.points.map(([x]) => x));
  // Latencies under 1 ms come back as 0 from autocannon (whole milliseconds): drawn at the floor of the axis.
  const floor = 0.5;
  const ys = chart.series.flatMap((s) => s.points.map(([, y]) => Math.max(y, floor))).concat((chart.references ?? []).map((r) => r.y));
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  const lowest = Math.min(...ys);
  const yMinDecade = Math.floor(Math.log10(lowest));
  const yMaxDecade = Math.ceil(Math.log10(Math.max(...ys)));
  // The axis starts at the floor when something sits on it, else at the decade below the lowest value.
  const yMin = lowest <= floor ? floor : 10 ** yMinDecade;
  const yMax = 10 ** yMaxDecade;
  const x = (v) => margin.left + (plotW * (Math.log10(v) - Math.log10(xMin))) / (Math.log10(xMax) - Math.log10(xMin) || 1);
  const y = (v) => margin.top + plotH - (plotH * (Math.log10(v) - Math.log10(yMin))) / (Math.log10(yMax) - Math.log10(yMin));
  const yPoint = (v) => y(Math.max(v, floor));

  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${margin.left}" y="24" font-size="16" font-weight="bold">${escape(chart.title)}</text>`);
  if (chart.subtitle) out.push(`<text x="${margin.left}" y="44" fill="#555">${escape(chart.subtitle)}</text>`);

  // Horizontal grid: every decade labelled, 2 and 5 in between lighter.
  for (let d = yMinDecade; d <= yMaxDecade; d += 1) {
    for (const m of [1, 2, 5]) {
      const v = Number((m * 10 ** d).toPrecision(1));
      if (v < yMin || v > yMax) continue;
      const py = fmt(y(v));
      out.push(`<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${py}" y2="${py}" stroke="${m === 1 ? '#ccc' : '#eee'}"/>`);
      if (m === 1 || v === yMin || yMaxDecade - yMinDecade <= 3)
        out.push(`<text x="${margin.left - 8}" y="${fmt(y(v) + 4)}" text-anchor="end" fill="#333">${v}</text>`);
    }
  }
  // Vertical grid at the measured loads.
  for (const v of [...new Set(xs)].sort((a, b) => a - b)) {
    const px = fmt(x(v));
    out.push(`<line x1="${px}" x2="${px}" y1="${margin.top}" y2="${margin.top + plotH}" stroke="#eee"/>`);
    out.push(`<text x="${px}" y="${margin.top + plotH + 18}" text-anchor="middle" fill="#333">${v}</text>`);
  }
  out.push(`<rect x="${margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#888"/>`);
  out.push(
    `<text x="${margin.left + plotW / 2}" y="${margin.top + plotH + 38}" text-anchor="middle">${escape(chart.xLabel)}</text>`,
    `<text transform="translate(18 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(chart.yLabel)}</text>`,
  );

  for (const ref of chart.references ?? []) {
    const py = fmt(y(ref.y));
    out.push(`<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${py}" y2="${py}" stroke="#c0392b" stroke-dasharray="2 3"/>`);
    out.push(`<text x="${margin.left + plotW - 6}" y="${fmt(y(ref.y) - 5)}" text-anchor="end" fill="#c0392b">${escape(ref.label)}</text>`);
  }

  chart.series.forEach((s, i) => {
    const path = s.points.map(([px, py], k) => `${k === 0 ? 'M' : 'L'}${fmt(x(px))},${fmt(yPoint(py))}`).join(' ');
    out.push(`<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    for (const [px, py] of s.points) out.push(`<circle cx="${fmt(x(px))}" cy="${fmt(yPoint(py))}" r="3" fill="${s.color}"/>`);
    const ly = margin.top + 10 + i * 22;
    const lx = margin.left + plotW + 16;
    out.push(
      `<line x1="${lx}" x2="${lx + 28}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      `<text x="${lx + 34}" y="${ly + 4}">${escape(s.label)}</text>`,
    );
  });
  if (chart.note) out.push(`<text x="${margin.left}" y="${height - 12}" fill="#555" font-size="11">${escape(chart.note)}</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

module.exports = { logLogChart };
