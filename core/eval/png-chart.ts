// Line charts as PNG without a browser: an RGBA buffer, Bresenham lines, a 3x5 bitmap font for
// labels, and a minimal PNG encoder (signature, IHDR, one zlib IDAT, IEND, CRC-32). No deps.
import { deflateSync } from 'node:zlib';

export interface Series { name: string; points: Array<[number, number]>; color?: [number, number, number] }
export interface ChartOptions { width?: number; height?: number; title?: string; xLabel?: string; yLabel?: string; yMin?: number; yMax?: number }

const PALETTE: Array<[number, number, number]> = [
  [31, 119, 180],
  [255, 127, 14],
  [44, 160, 44],
  [214, 39, 40],
  [148, 103, 189],
  [140, 86, 75],
  [227, 119, 194],
  [127, 127, 127],
];

// 3x5 glyphs, rows top to bottom, 3 bits each ("111" = all on).
const FONT: Record<string, string> = {
  '0': '111101101101111', '1': '010110010010111', '2': '111001111100111', '3': '111001111001111', '4': '101101111001001',
  '5': '111100111001111', '6': '111100111101111', '7': '111001001001001', '8': '111101111101111', '9': '111101111001111',
  '.': '000000000000010', '-': '000000111000000', '/': '001001010100100', '@': '010101111101010', ':': '000010000010000',
  '_': '000000000000111', '(': '010100100100010', ')': '010001001001010', ' ': '000000000000000', '%': '101001010100101',
  A: '010101111101101', B: '110101110101110', C: '011100100100011', D: '110101101101110', E: '111100110100111', F: '111100110100100',
  G: '011100101101011', H: '101101111101101', I: '111010010010111', J: '001001001101010', K: '101101110101101', L: '100100100100111',
  M: '101111111101101', N: '110101101101101', O: '010101101101010', P: '110101110100100', Q: '010101101110011', R: '110101110101101',
  S: '011100010001110', T: '111010010010010', U: '101101101101111', V: '101101101101010', W: '101101111111101', X: '101101010101101',
  Y: '101101010010010', Z: '111001010100111',
};

export class Canvas {
  readonly data: Uint8Array;
  constructor(readonly width: number, readonly height: number) {
    this.data = new Uint8Array(width * height * 4).fill(255);
  }
  set(x: number, y: number, [r, g, b]: [number, number, number]): void {
    x = Math.round(x); y = Math.round(y);
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
    const i = (y * this.width + x) * 4;
    this.data[i] = r; this.data[i + 1] = g; this.data[i + 2] = b; this.data[i + 3] = 255;
  }
  line(x0: number, y0: number, x1: number, y1: number, color: [number, number, number], thick = 1): void {
    x0 = Math.round(x0); y0 = Math.round(y0); x1 = Math.round(x1); y1 = Math.round(y1);
    const dx = Math.abs(x1 - x0), dy = -Math.abs(y1 - y0);
    const sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    let err = dx + dy;
    for (;;) {
      for (let a = 0; a < thick; a++) for (let b = 0; b < thick; b++) this.set(x0 + a, y0 + b, color);
      if (x0 === x1 && y0 === y1) break;
      const e2 = 2 * err;
      if (e2 >= dy) { err += dy; x0 += sx; }
      if (e2 <= dx) { err += dx; y0 += sy; }
    }
  }
  text(x: number, y: number, text: string, color: [number, number, number] = [0, 0, 0], scale = 2): void {
    let cx = x;
    for (const ch of text.toUpperCase()) {
      const glyph = FONT[ch] ?? FONT[' ']!;
      for (let r = 0; r < 5; r++) for (let c = 0; c < 3; c++) {
        if (glyph[r * 3 + c] === '1') for (let a = 0; a < scale; a++) for (let b = 0; b < scale; b++) this.set(cx + c * scale + a, y + r * scale + b, color);
      }
      cx += 4 * scale;
    }
  }
  toPng(): Buffer { return encodePng(this.width, this.height, this.data); }
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, body: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, 'ascii');
  Buffer.from(body).copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + body.length)), 8 + body.length);
  return out;
}

/** Encode RGBA pixels (8 bits per channel) as a PNG file. */
export function encodePng(width: number, height: number, rgba: Uint8Array): Buffer {
  if (rgba.length !== width * height * 4) throw new Error(`encodePng: expected ${width * height * 4} bytes for ${width}x${height} RGBA; ` +
    `received ${rgba.length}`);
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0; // filter: none
    Buffer.from(rgba.buffer, rgba.byteOffset + y * width * 4, width * 4).copy(raw, y * (width * 4 + 1) + 1);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0); header.writeUInt32BE(height, 4);
  header[8] = 8; header[9] = 6; header[10] = 0; header[11] = 0; header[12] = 0;
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', new Uint8Array(0)),
  ]);
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return '-';
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(1) : v.toFixed(2);
}

/** A line chart of several series with axes, ticks, a title and a legend. */
export function lineChartPng(series: Series[], opts: ChartOptions = {}): Buffer {
  const width = opts.width ?? 640, height = opts.height ?? 400;
  const canvas = new Canvas(width, height);
  const left = 60, right = width - 20, top = 34, bottom = height - 40 - 14 * Math.ceil(series.length / 2);
  const all = series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  let xMin = Math.min(...all.map((p) => p[0])), xMax = Math.max(...all.map((p) => p[0]));
  let yMin = opts.yMin ?? Math.min(...all.map((p) => p[1])), yMax = opts.yMax ?? Math.max(...all.map((p) => p[1]));
  if (!Number.isFinite(xMin)) { xMin = 0; xMax = 1; }
  if (!Number.isFinite(yMin)) { yMin = 0; yMax = 1; }
  if (xMax === xMin) xMax = xMin + 1;
  if (yMax === yMin) { yMax = yMin + 1; }
  const px = (x: number): number => left + ((x - xMin) / (xMax - xMin)) * (right - left);
  const py = (y: number): number => bottom - ((y - yMin) / (yMax - yMin)) * (bottom - top);
  const grey: [number, number, number] = [220, 220, 220], black: [number, number, number] = [0, 0, 0];
  for (let i = 0; i <= 4; i++) {
    const y = yMin + ((yMax - yMin) * i) / 4;
    canvas.line(left, py(y), right, py(y), grey);
    canvas.text(4, py(y) - 5, fmt(y), black, 2);
    const x = xMin + ((xMax - xMin) * i) / 4;
    canvas.line(px(x), top, px(x), bottom, grey);
    canvas.text(px(x) - 8, bottom + 6, fmt(x), black, 2);
  }
  canvas.line(left, bottom, right, bottom, black);
  canvas.line(left, top, left, bottom, black);
  if (opts.title) canvas.text(left, 8, opts.title.slice(0, Math.floor((width - left) / 8)), black, 2);
  if (opts.xLabel) canvas.text(right - opts.xLabel.length * 8, bottom + 20, opts.xLabel, black, 2);
  series.forEach((s, i) => {
    const color = s.color ?? PALETTE[i % PALETTE.length]!;
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)).sort((a, b) => a[0] - b[0]);
    for (let j = 1; j < pts.length; j++) canvas.line(px(pts[j - 1]![0]), py(pts[j - 1]![1]), px(pts[j]![0]), py(pts[j]![1]), color, 2);
    if (pts.length === 1) canvas.line(px(pts[0]![0]) - 2, py(pts[0]![1]), px(pts[0]![0]) + 2, py(pts[0]![1]), color, 3);
    const lx = left + (i % 2) * ((right - left) / 2), ly = height - 12 - 14 * (Math.ceil(series.length / 2) - Math.floor(i / 2));
    canvas.line(lx, ly + 5, lx + 16, ly + 5, color, 3);
    canvas.text(lx + 22, ly, s.name.slice(0, 34), black, 2);
  });
  return canvas.toPng();
}
