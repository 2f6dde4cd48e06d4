'use strict'
/**
 * Line charts as SVG, written by hand (no plotting dependency), for the cost curves
 * (bench/curves.js): one panel per metric, a log-scale x axis where the range spans decades,
 * one line per variant, an error bar per point (the spread of its repeats), labels.
 *
 *   figure({ title, subtitle, panels: [{ yLabel, xLabel, logX, xFormat, series: [{ name, points: [{ x, y, lo, hi }] }] }] })
 *
 * returns the SVG text. Every point is a `<circle class="point">` with its values in data-
 * attributes, so that a test or a reader can check the figure against the table beside it.
 */

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

const COLORS = ['#1f6fb4', '#d9622b', '#2f9a4a', '#8a4fb0', '#b0323a', '#6b6b6b']
const DASHES = ['', '6 3', '2 3', '8 3 2 3']

/** Round numbers for a linear axis from 0 to at least `max`: about `count` steps. */
function linearTicks (max, count = 5) {
  if (!(max > 0)) return [0, 1]
  const raw = max / count
  const mag = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)
  const ticks = []
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)))
  if (ticks[ticks.length - 1] < max) ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)))
  return ticks
}

/** Powers of ten (and of two when the range spans less than two decades) from min to max. */
function logTicks (min, max) {
  const base = Math.log10(max / min) < 2 ? 2 : 10
  const out = []
  for (let v = base ** Math.floor(Math.log(min) / Math.log(base)); v <= max * 1.0001; v *= base) if (v >= min / 1.0001) out.push(v)
  return out.length >= 2 ? out : [min, max]
}

/** Does the x range span at least one decade (then the axis is logarithmic unless told)? */
function spansDecades (xs) {
  const pos = xs.filter((x) => x > 0)
  return pos.length === xs.length && Math.max(...pos) / Math.min(...pos) >= 10
}

function compact (v) {
  if (Math.abs(v) >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`
  if (Math.abs(v) >= 1e4) return `${Number((v / 1e3).toPrecision(3))}k`
  return String(Number(v.toPrecision(4)))
}

/** One panel at (x0, y0) of `w` x `h`; returns its SVG parts. */
function panel (p, x0, y0, w, h) {
  const parts = []
  const margin = { left: 72, right: 40, top: 26, bottom: 48 }
  const pw = w - margin.left - margin.right
  const ph = h - margin.top - margin.bottom
  const all = p.series.flatMap((s) => s.points)
  const xs = all.map((q) => q.x)
  const logX = p.logX ?? spansDecades(xs)
  const xMin = Math.min(...xs)
  const xMax = Math.max(...xs)
  // a log-scale y axis too where the values span two decades or more (CPU of 1 KB to 1 MiB bodies)
  const ys = all.flatMap((q) => [q.y, q.lo ?? q.y, q.hi ?? q.y])
  const logY = p.logY ?? (ys.every((y) => y > 0) && Math.max(...ys) / Math.min(...ys) >= 100)
  const yMin = logY ? 10 ** Math.floor(Math.log10(Math.min(...ys))) : 0
  const yTicks = logY ? logTicks(yMin, 10 ** Math.ceil(Math.log10(Math.max(...ys)))) : linearTicks(Math.max(...ys, 0) * 1.05)
  const yMax = yTicks[yTicks.length - 1]
  const fx = logX
    ? (x) => x0 + margin.left + (xMax === xMin ? pw / 2 : (Math.log(x / xMin) / Math.log(xMax / xMin)) * pw)
    : (x) => x0 + margin.left + (xMax === xMin ? pw / 2 : ((x - xMin) / (xMax - xMin)) * pw)
  const fy = logY
    ? (y) => y0 + margin.top + ph - (Math.log(Math.max(y, yMin) / yMin) / Math.log(yMax / yMin)) * ph
    : (y) => y0 + margin.top + ph - (y / yMax) * ph
  const fmt = p.xFormat ?? compact
  parts.push(`<g class="panel" data-log-x="${logX}" data-log-y="${logY}">`)
  parts.push(`<text x="${x0 + margin.left}" y="${y0 + 16}" font-weight="bold">${esc(p.yLabel + (logY ? ' (log scale)' : ''))}</text>`)
  // grid and y ticks
  for (const t of yTicks) {
    const y = fy(t).toFixed(1)
    parts.push(`<line x1="${x0 + margin.left}" y1="${y}" x2="${x0 + margin.left + pw}" y2="${y}" stroke="#e6e6e6"/>`)
    parts.push(`<text x="${x0 + margin.left - 6}" y="${(fy(t) + 4).toFixed(1)}" text-anchor="end" fill="#444444">${esc(compact(t))}</text>`)
  }
  // x ticks: the points' own x values (few), or the scale's ticks
  const xTicks = [...new Set(xs)].length <= 8 ? [...new Set(xs)].sort((a, b) => a - b) : logX ? logTicks(xMin, xMax) : linearTicks(xMax)
  for (const t of xTicks) {
    const x = fx(t).toFixed(1)
    parts.push(`<line x1="${x}" y1="${y0 + margin.top}" x2="${x}" y2="${y0 + margin.top + ph}" stroke="#f0f0f0"/>`)
    parts.push(`<text x="${x}" y="${y0 + margin.top + ph + 16}" text-anchor="middle" fill="#444444">${esc(fmt(t))}</text>`)
  }
  // axes
  parts.push(`<line class="axis" x1="${x0 + margin.left}" y1="${y0 + margin.top + ph}" x2="${x0 + margin.left + pw}" y2="${y0 + margin.top + ph}" stroke="#000000"/>`)
  parts.push(`<line class="axis" x1="${x0 + margin.left}" y1="${y0 + margin.top}" x2="${x0 + margin.left}" y2="${y0 + margin.top + ph}" stroke="#000000"/>`)
  parts.push(`<text x="${x0 + margin.left + pw / 2}" y="${y0 + h - 10}" text-anchor="middle">${esc(p.xLabel + (logX ? ' (log scale)' : ''))}</text>`)
  // series: line, error bars, points
  p.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]
    const dash = DASHES[i % DASHES.length]
    const pts = [...s.points].sort((a, b) => a.x - b.x)
    parts.push(`<g class="series" data-name="${esc(s.name)}">`)
    if (pts.length > 1) parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${pts.map((q) => `${fx(q.x).toFixed(1)},${fy(q.y).toFixed(1)}`).join(' ')}"/>`)
    for (const q of pts) {
      const cx = fx(q.x).toFixed(1)
      if (q.lo !== undefined && q.hi !== undefined) {
        parts.push(`<line class="spread" x1="${cx}" y1="${fy(q.lo).toFixed(1)}" x2="${cx}" y2="${fy(q.hi).toFixed(1)}" stroke="${color}" stroke-width="1.5"/>`)
        for (const v of [q.lo, q.hi]) parts.push(`<line x1="${(fx(q.x) - 4).toFixed(1)}" y1="${fy(v).toFixed(1)}" x2="${(fx(q.x) + 4).toFixed(1)}" y2="${fy(v).toFixed(1)}" stroke="${color}" stroke-width="1.5"/>`)
      }
      parts.push(`<circle class="point" cx="${cx}" cy="${fy(q.y).toFixed(1)}" r="3" fill="${color}" data-x="${q.x}" data-y="${q.y}"${q.lo !== undefined ? ` data-lo="${q.lo}" data-hi="${q.hi}"` : ''}/>`)
    }
    parts.push('</g>')
  })
  // legend, top right inside the panel (about 6.6 px a character at 12 px)
  const legendW = 40 + 6.6 * Math.max(...p.series.map((s) => s.name.length))
  p.series.forEach((s, i) => {
    const lx = x0 + margin.left + pw - legendW
    const ly = y0 + margin.top + 8 + i * 16
    const dash = DASHES[i % DASHES.length]
    parts.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="${COLORS[i % COLORS.length]}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`)
    parts.push(`<text x="${lx + 30}" y="${ly + 4}">${esc(s.name)}</text>`)
  })
  parts.push('</g>')
  return parts
}

/** Panels stacked vertically under one title; returns the SVG text. */
function figure ({ title, subtitle = '', panels, width = 900, panelHeight = 300 }) {
  const top = subtitle ? 52 : 36
  const height = top + panels.length * panelHeight + 8
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`
  ]
  if (subtitle) parts.push(`<text x="10" y="40" fill="#555555">${esc(subtitle)}</text>`)
  panels.forEach((p, i) => parts.push(...panel(p, 0, top + i * panelHeight, width, panelHeight)))
  parts.push('</svg>')
  return parts.join('\n') + '\n'
}

module.exports = { figure, linearTicks, logTicks, spansDecades }
