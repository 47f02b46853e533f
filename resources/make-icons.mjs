#!/usr/bin/env node
// Generates the PNG icon set (resources/icons/<size>x<size>.png, resources/icon.png) from the
// same geometry as resources/icon.svg, with a tiny rasteriser and zlib — no image libraries.
// Run: node resources/make-icons.mjs
import { deflateSync } from 'node:zlib';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const hex = (h) => [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)];

// Shapes in the 256-unit design space, painted in order.
const shapes = [
  { kind: 'rrect', x: 8, y: 8, w: 240, h: 240, r: 48, color: hex('#1e3a8a') },
  ...[[44, 44], [104, 44], [164, 44], [44, 104], [164, 104], [44, 164], [104, 164]].map(([x, y]) => ({ kind: 'rrect', x, y, w: 48, h: 48, r: 8, color: hex('#dbe7ff') })),
  { kind: 'rrect', x: 104, y: 104, w: 48, h: 48, r: 8, color: hex('#f59e0b') },
  { kind: 'circle', cx: 188, cy: 188, r: 26, color: hex('#22c55e') },
  { kind: 'line', x1: 176, y1: 188, x2: 198, y2: 188, w: 6, color: hex('#0b1f12') },
  { kind: 'line', x1: 189, y1: 178, x2: 199, y2: 188, w: 6, color: hex('#0b1f12') },
  { kind: 'line', x1: 199, y1: 188, x2: 189, y2: 198, w: 6, color: hex('#0b1f12') },
];

function inside(s, x, y) {
  if (s.kind === 'rrect') {
    if (x < s.x || x > s.x + s.w || y < s.y || y > s.y + s.h) return false;
    const cx = Math.min(Math.max(x, s.x + s.r), s.x + s.w - s.r);
    const cy = Math.min(Math.max(y, s.y + s.r), s.y + s.h - s.r);
    return (x - cx) ** 2 + (y - cy) ** 2 <= s.r ** 2;
  }
  if (s.kind === 'circle') return (x - s.cx) ** 2 + (y - s.cy) ** 2 <= s.r ** 2;
  // line segment with round caps
  const dx = s.x2 - s.x1; const dy = s.y2 - s.y1;
  const t = Math.max(0, Math.min(1, ((x - s.x1) * dx + (y - s.y1) * dy) / (dx * dx + dy * dy)));
  return (x - s.x1 - t * dx) ** 2 + (y - s.y1 - t * dy) ** 2 <= (s.w / 2) ** 2;
}

/** RGBA pixels with 4x4 supersampling for smooth edges. */
function render(size) {
  const px = Buffer.alloc(size * size * 4);
  const ss = 4;
  for (let py = 0; py < size; py++) for (let pxi = 0; pxi < size; pxi++) {
    let r = 0, g = 0, b = 0, a = 0;
    for (let sy = 0; sy < ss; sy++) for (let sx = 0; sx < ss; sx++) {
      const x = ((pxi + (sx + 0.5) / ss) / size) * 256;
      const y = ((py + (sy + 0.5) / ss) / size) * 256;
      let color = null;
      for (const s of shapes) if (inside(s, x, y)) color = s.color;
      if (color) { r += color[0]; g += color[1]; b += color[2]; a += 1; }
    }
    const o = (py * size + pxi) * 4;
    const n = ss * ss;
    px[o] = a ? Math.round(r / a) : 0; px[o + 1] = a ? Math.round(g / a) : 0; px[o + 2] = a ? Math.round(b / a) : 0;
    px[o + 3] = Math.round((a / n) * 255);
  }
  return px;
}

const crcTable = Array.from({ length: 256 }, (_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c >>> 0; });
const crc32 = (buf) => { let c = 0xffffffff; for (const b of buf) c = crcTable[(c ^ b) & 255] ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0; };
function chunk(type, data) {
  const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
export function png(size) {
  const px = render(size);
  const raw = Buffer.alloc((size * 4 + 1) * size);
  for (let y = 0; y < size; y++) { raw[y * (size * 4 + 1)] = 0; px.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4); }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0); ihdr.writeUInt32BE(size, 4); ihdr[8] = 8; ihdr[9] = 6; ihdr[10] = 0; ihdr[11] = 0; ihdr[12] = 0;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

const sizes = [16, 24, 32, 48, 64, 128, 256, 512, 1024];
mkdirSync(join(here, 'icons'), { recursive: true });
for (const s of sizes) writeFileSync(join(here, 'icons', `${s}x${s}.png`), png(s));
writeFileSync(join(here, 'icon.png'), png(512));
console.log(`wrote resources/icon.png and resources/icons/{${sizes.map((s) => `${s}x${s}`).join(',')}}.png`);
