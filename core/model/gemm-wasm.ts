// A float32 matrix product in a small hand-assembled WebAssembly module (SIMD), for the wasm training
// step (issue 34 item 4). Why: through TF.js-wasm every product is a tensor upload, an XNNPACK
// operator created for a fresh right operand (its packing transposes it) and a kernel call; the
// training step's transposes were separate JS passes; and attention ran 8 small products per tile
// over the causally masked half too. Here a transposed operand is only a stride, products read JS
// arrays directly, and triangular hints skip the masked half (GemmTriangle).
// Each C element is a float32 sum over k in order of float32 products (a multiply and an add per
// step, as XNNPACK's wasm-SIMD kernel does), so results match tf.matMul on wasm. With
// gemmOptions.fma (SPA_GEMM_FMA=1) and relaxed SIMD, f32x4.relaxed_madd fuses them (measured 41 vs 33
// GF/s on [4096,128]x[128,352]; the last bits differ, so it is off by default). Node 20's V8 has
// relaxed SIMD behind a flag (set here before compiling); Electron 38's V8 has it on.
//
// C [M, N] = A [M, K] B [K, N], each operand given row-major or transposed. A is copied as it is
// into the module's memory (the kernel reads it with strides, so a transposed A costs nothing
// extra); B is packed in JS in panels of 8 columns (the inner loop reads it sequentially); then, per
// chunk of k, for each block of MR rows and each panel, MR x 8 accumulators. Requires N % 8 == 0
// (gemmSupported).
import v8 from 'node:v8';

/**
 * Rows per micro-kernel block (MR x 8 accumulators). Measured here (CPU GF/s, Node 20, no FMA, on
 * [4096,128]x[128,352] / [4096,352]x[352,128] / transposed [352,4096]x[4096,128] / [256,256]x[256,32]):
 * MR 2: 30/28/23/28, MR 3: 32/31/27/32, MR 4: 34/31/26/31, MR 5: 27/26/23/26, MR 6: 24/25/22/26
 * (12 accumulators + 3 more v128 values spill out of V8's 15 allocatable SIMD registers).
 */
export const GEMM_MR = 4;
const NR = 8;
const K_CHUNK = 256;                       // k per call: a B panel chunk (8 KB) stays in L1

// ---------------------------------------------------------------- a minimal wasm encoder

function uleb(n: number): number[] {
  const out: number[] = [];
  do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n);
  return out;
}
function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f; n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && (b & 0x40))) { out.push(b); return out; }
    out.push(b | 0x80);
  }
}
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];
const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const str = (s: string) => [...uleb(s.length), ...[...s].map((c) => c.charCodeAt(0))];

const I32 = 0x7f; const F32 = 0x7d; const V128 = 0x7b;
const op = {
  block: 0x02, loop: 0x03, end: 0x0b, brIf: 0x0d, get: 0x20, set: 0x21, tee: 0x22,
  i32const: 0x41, i32add: 0x6a, i32sub: 0x6b, i32mul: 0x6c, i32ne: 0x47, i32ltu: 0x49,
};
const simd = (code: number) => [0xfd, ...uleb(code)];
const V = {
  load: (offset: number) => [...simd(0x00), 4, ...uleb(offset)],
  load32Splat: (offset: number) => [...simd(0x09), 2, ...uleb(offset)],
  store: (offset: number) => [...simd(0x0b), 4, ...uleb(offset)],
  zero: () => [...simd(0x0c), ...new Array(16).fill(0)],
  add: () => simd(0xe4),
  mul: () => simd(0xe6),
  madd: () => simd(0x105),
};

const f32 = (x: number) => [0x43, ...new Uint8Array(Float32Array.of(x).buffer)];
const splat = (x: number) => [...f32(x), ...simd(0x13)];

/**
 * expShift(src, dst, groups, shift) -> sum: dst[j] = exp(src[j] - shift) for j < 4 groups, in f32x4 lanes,
 * and the sum of those values (float32). exp as Cephes' expf: n = round(x log2 e), r = x - n ln 2 (in
 * two parts), a degree-7 polynomial in r times 2^n (relative error ~1e-7); x is clamped at -87.336
 * (exp = 1.2e-38 there, not 0).
 */
function expBody(): number[] {
  const [SRC, DST, G, SHIFT, ACC, X, NN, R, PP, SH] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const g = (l: number) => [op.get, ...uleb(l)];
  const s = (l: number) => [op.set, ...uleb(l)];
  const f4 = { add: simd(0xe4), sub: simd(0xe5), mul: simd(0xe6), max: simd(0xe9), nearest: simd(0x6a) };
  const code = [
    ...g(SHIFT), ...simd(0x13), ...s(SH),
    ...V.zero(), ...s(ACC),
    op.block, 0x40,
    ...g(G), 0x45 /* i32.eqz */, op.brIf, 0,
    op.loop, 0x40,
    ...g(SRC), ...V.load(0), ...g(SH), ...f4.sub, ...splat(-87.33654), ...f4.max, ...s(X),
    ...g(X), ...splat(Math.LOG2E), ...f4.mul, ...f4.nearest, ...s(NN),
    ...g(X), ...g(NN), ...splat(0.693359375), ...f4.mul, ...f4.sub, ...g(NN), ...splat(-2.12194440e-4), ...f4.mul, ...f4.sub, ...s(R),
    ...splat(1.9875691500e-4), ...g(R), ...f4.mul, ...splat(1.3981999507e-3), ...f4.add,
    ...g(R), ...f4.mul, ...splat(8.3334519073e-3), ...f4.add,
    ...g(R), ...f4.mul, ...splat(4.1665795894e-2), ...f4.add,
    ...g(R), ...f4.mul, ...splat(1.6666665459e-1), ...f4.add,
    ...g(R), ...f4.mul, ...splat(5.0000001201e-1), ...f4.add,
    ...g(R), ...f4.mul, ...g(R), ...f4.mul, ...g(R), ...f4.add, ...splat(1), ...f4.add, ...s(PP),
    // 2^n: (int(n) + 127) << 23 as float bits
    ...g(NN), ...simd(0xf8), op.i32const, ...sleb(127), ...simd(0x11), ...simd(0xae), op.i32const, 23, ...simd(0xab),
    ...g(PP), ...f4.mul, ...s(PP),
    ...g(DST), ...g(PP), ...V.store(0),
    ...g(ACC), ...g(PP), ...f4.add, ...s(ACC),
    ...g(SRC), op.i32const, 16, op.i32add, ...s(SRC),
    ...g(DST), op.i32const, 16, op.i32add, ...s(DST),
    ...g(G), op.i32const, 1, op.i32sub, op.tee, ...uleb(G), op.brIf, 0,
    op.end,
    op.end,
    ...g(ACC), ...simd(0x1f), 0, ...g(ACC), ...simd(0x1f), 1, 0x92, ...g(ACC), ...simd(0x1f), 2, 0x92, ...g(ACC), ...simd(0x1f), 3, 0x92,
    op.end,
  ];
  return [...vec([[...uleb(6), V128]]), ...code];
}

/**
 * The module: memory (exported "mem") and gemm(a, b, c, M, K, N, accumulate, rowStride, kStride)
 * with byte addresses: A (i, k) at a + i rowStride + k kStride (row-major A: rowStride 4K, kStride 4;
 * its transpose: 4 and 4M), b packed [N / 8][K][8], c row-major [M, N] (M a multiple of mr; rows
 * past the real M are read and written, then dropped); C = A B, or C += A B when accumulate != 0.
 */
function buildModule(mr: number, relaxed: boolean, importMemory = false): Uint8Array {
  // params 0..9: a b c M K N accumulate rowStride kStride tri; locals 10..: i p k ap bp cp rowBytes panels, npEff, k0, row offsets [mr];
  // v128 acc.., b0, b1, av
  const [A, B, C, M, K, N, ACC, RS, KS, TRI] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const [I, P, KK, AP, BP, CP, RB, NP, NPE, K0, KC] = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20];
  const RO = (r: number) => 21 + r;
  const acc = (r: number, h: number) => 21 + mr + r * 2 + h;
  const B0 = 21 + mr + 2 * mr; const B1 = B0 + 1; const AV = B1 + 1;
  const SELECT = 0x1b; const EQ = 0x46;
  const g = (l: number) => [op.get, ...uleb(l)];
  const s = (l: number) => [op.set, ...uleb(l)];
  const c32 = (n: number) => [op.i32const, ...sleb(n)];
  const lim = [...g(I), ...c32(mr - 1), op.i32add, ...c32(3), 0x76 /* i32.shr_u */, ...c32(1), op.i32add]; // panels up to row i + mr - 1
  const code: number[] = [
    ...g(N), ...c32(4), op.i32mul, ...s(RB),                 // bytes per row of C
    ...g(N), ...c32(3), 0x76 /* i32.shr_u */, ...s(NP),      // panels
  ];
  for (let r = 0; r < mr; r++) code.push(...g(RS), ...c32(r), op.i32mul, ...s(RO(r)));
  code.push(
    ...c32(0), ...s(I),
    op.loop, 0x40,                                            // for each block of mr rows
    // the block's panels: all, or (tri 1: C lower triangular) those with a column <= i + mr - 1: select(min(lim, NP), NP, tri == 1)
    ...lim, ...g(NP), ...lim, ...g(NP), op.i32ltu, SELECT, ...g(NP), ...g(TRI), ...c32(1), EQ, SELECT, ...s(NPE),
    // the block's k range: all; (tri 2: A lower triangular) k < i + mr; (tri 3: A upper triangular) k >= i
    ...g(I), ...c32(0), ...g(TRI), ...c32(3), EQ, SELECT, ...s(K0),
    ...g(TRI), ...c32(2), EQ, 0x04 /* if */, 0x40,
    ...g(I), ...c32(mr), op.i32add, ...g(K), ...g(I), ...c32(mr), op.i32add, ...g(K), op.i32ltu, SELECT, ...s(KC),
    0x05 /* else */,
    ...g(K), ...g(K0), op.i32sub, ...s(KC),
    op.end,
    ...c32(0), ...s(P),
    op.loop, 0x40,                                            // for each panel of 8 columns
    // cp = c + (i * N + p * 8) * 4
    ...g(C), ...g(I), ...g(RB), op.i32mul, op.i32add, ...g(P), ...c32(32), op.i32mul, op.i32add, ...s(CP),
    ...g(ACC), 0x04 /* if */, 0x40,
  );
  for (let r = 0; r < mr; r++) for (let h = 0; h < 2; h++) code.push(...g(CP), ...g(RB), ...c32(r), op.i32mul, op.i32add, ...V.load(h * 16), ...s(acc(r, h)));
  code.push(0x05 /* else */);
  for (let r = 0; r < mr; r++) for (let h = 0; h < 2; h++) code.push(...V.zero(), ...s(acc(r, h)));
  code.push(
    op.end,
    // ap = a + i * rowStride + k0 * kStride, bp = b + (p * K + k0) * 32, k = the block's k count (set above, counted down here)
    ...g(A), ...g(I), ...g(RS), op.i32mul, op.i32add, ...g(K0), ...g(KS), op.i32mul, op.i32add, ...s(AP),
    ...g(B), ...g(P), ...g(K), op.i32mul, ...g(K0), op.i32add, ...c32(32), op.i32mul, op.i32add, ...s(BP),
    ...g(KC), ...s(KK),
    op.block, 0x40,
    ...g(KK), ...c32(1), 0x48 /* i32.lt_s */, op.brIf, 0,                  // no k for this block
    op.loop, 0x40,                                            // over k
    ...g(BP), ...V.load(0), ...s(B0),
    ...g(BP), ...V.load(16), ...s(B1),
  );
  for (let r = 0; r < mr; r++) {
    code.push(...g(AP), ...(r ? [...g(RO(r)), op.i32add] : []), ...V.load32Splat(0), ...s(AV));
    for (let h = 0; h < 2; h++) {
      if (relaxed) code.push(...g(AV), ...g(h === 0 ? B0 : B1), ...g(acc(r, h)), ...V.madd(), ...s(acc(r, h)));
      else code.push(...g(AV), ...g(h === 0 ? B0 : B1), ...V.mul(), ...g(acc(r, h)), ...V.add(), ...s(acc(r, h)));
    }
  }
  code.push(
    ...g(AP), ...g(KS), op.i32add, ...s(AP),
    ...g(BP), ...c32(32), op.i32add, ...s(BP),
    ...g(KK), ...c32(1), op.i32sub, op.tee, ...uleb(KK), op.brIf, 0,
    op.end,
    op.end,
  );
  for (let r = 0; r < mr; r++) {
    for (let h = 0; h < 2; h++) code.push(...g(CP), ...g(acc(r, h)), ...V.store(h * 16));
    if (r < mr - 1) code.push(...g(CP), ...g(RB), op.i32add, ...s(CP));
  }
  code.push(
    ...g(P), ...c32(1), op.i32add, op.tee, ...uleb(P), ...g(NPE), op.i32ltu, op.brIf, 0,
    op.end,
    ...g(I), ...c32(mr), op.i32add, op.tee, ...uleb(I), ...g(M), op.i32ltu, op.brIf, 0,
    op.end,
    op.end,
  );
  const locals = vec([[...uleb(11 + mr), I32], [...uleb(2 * mr + 3), V128]]);
  const body = [...locals, ...code];
  const exp = expBody();
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([[0x60, ...vec(new Array(10).fill([I32])), 0], [0x60, ...vec([[I32], [I32], [I32], [F32]]), ...vec([[F32]])]])),
    // the memory: imported ("env" "mem", any size) to work on TF.js-wasm's heap, or its own (exported "mem")
    ...(importMemory ? section(2, vec([[...str('env'), ...str('mem'), 0x02, 0x00, 1]])) : []),
    ...section(3, vec([[0], [1]])),
    ...(importMemory ? [] : section(5, vec([[0x00, 1]]))),
    ...section(7, vec([[...str('gemm'), 0x00, 0], [...str('expShift'), 0x00, 1], ...(importMemory ? [] : [[...str('mem'), 0x02, 0]])])),
    ...section(10, vec([[...uleb(body.length), ...body], [...uleb(exp.length), ...exp]])),
  ];
  return new Uint8Array(bytes);
}

// ---------------------------------------------------------------- instance and packing

/** The parts of the WebAssembly JS API used here (this project's TS lib has no DOM / wasm globals). */
interface WasmMemory { buffer: ArrayBuffer; grow(pages: number): number }
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const wasmApi = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

interface Gemm {
  gemm: (a: number, b: number, c: number, M: number, K: number, N: number, accumulate: number, rowStride: number, kStride: number, tri: number) => void;
  expShift: (src: number, dst: number, groups: number, shift: number) => number;
  mem: WasmMemory;
  relaxed: boolean;
}
const instances = new Map<boolean, Gemm | null>();
let relaxedHere: boolean | undefined;

/** Whether C is accumulated with fused multiply-adds (relaxed SIMD, where available) or a multiply and an add. */
export const gemmOptions = { fma: process.env.SPA_GEMM_FMA === '1' };

function relaxedAvailable(): boolean {
  if (relaxedHere !== undefined) return relaxedHere;
  if (!wasmApi) return (relaxedHere = false);
  const probe = buildModule(1, true);
  if (wasmApi.validate(probe)) return (relaxedHere = true);
  try { v8.setFlagsFromString('--experimental-wasm-relaxed-simd'); } catch { return (relaxedHere = false); }
  return (relaxedHere = wasmApi.validate(probe));
}

/** The compiled module (null when this runtime has no wasm SIMD). */
function gemmInstance(): Gemm | null {
  const relaxed = gemmOptions.fma && relaxedAvailable();
  const known = instances.get(relaxed);
  if (known !== undefined) return known;
  let made: Gemm | null = null;
  try {
    if (wasmApi) {
      const module = new wasmApi.Module(buildModule(GEMM_MR, relaxed));
      const exports = new wasmApi.Instance(module, {}).exports as { gemm: Gemm['gemm']; expShift: Gemm['expShift']; mem: WasmMemory };
      made = { gemm: exports.gemm, expShift: exports.expShift, mem: exports.mem, relaxed };
    }
  } catch {
    made = null;
  }
  instances.set(relaxed, made);
  return made;
}

/** Whether gemm runs here, and whether with fused multiply-adds (relaxed SIMD). */
export function gemmInfo(): { available: boolean; relaxed: boolean } {
  const g = gemmInstance();
  return { available: g !== null, relaxed: g?.relaxed ?? false };
}

/** Whether gemm handles these sizes (N % 8 == 0, and the module compiled). */
export function gemmSupported(M: number, N: number): boolean {
  return M > 0 && N > 0 && N % NR === 0 && gemmInstance() !== null;
}

function heap(bytes: number): Gemm {
  const g = gemmInstance();
  if (!g) throw new Error('gemm: this runtime has no WebAssembly SIMD');
  const have = g.mem.buffer.byteLength;
  if (have < bytes) g.mem.grow(Math.ceil((bytes - have) / 65536));
  return g;
}

/**
 * One operand as a row-major matrix [rows, cols] at `offset` of `data`, or its transpose when
 * `transposed` (then `data` holds [cols, rows] row-major).
 */
export interface GemmOperand { data: Float32Array; offset?: number; transposed?: boolean }

/**
 * Work skipped for causal attention (a hint: the result equals the full product where the caller reads it):
 * 'lowerC': only C (i, j) with j <= i are needed (the rest of C may be left unwritten, and then holds garbage);
 * 'lowerA': A (i, k) = 0 for k > i; 'upperA': A (i, k) = 0 for k < i (the product skips those k).
 */
export type GemmTriangle = 'none' | 'lowerC' | 'lowerA' | 'upperA';
const TRIANGLE: Record<GemmTriangle, number> = { none: 0, lowerC: 1, lowerA: 2, upperA: 3 };

/**
 * C [M, N] = A [M, K] B [K, N] in float32 (products accumulated in k order per element, fused
 * multiply-adds when relaxed SIMD is available). A is `a.data` [M, K] row-major, or [K, M] when
 * `a.transposed`; B is [K, N], or [N, K] when `b.transposed`. Writes C into `out` (length >= M*N)
 * or a new array; with `out` null it returns a view of the module's memory, valid until the next call
 * (the next call may take that view, rewritten in place, as its A without copying it).
 * Throws when the sizes are not supported (see gemmSupported) or the operands are
 * too short.
 */
export function gemm(a: GemmOperand, b: GemmOperand, M: number, K: number, N: number, out?: Float32Array | null, tri: GemmTriangle = 'none'): Float32Array {
  if (!gemmSupported(M, N) || !(K > 0)) throw new Error(`gemm: unsupported sizes M ${M}, K ${K}, N ${N} (a multiple of 8)`);
  const ao = a.offset ?? 0;
  const bo = b.offset ?? 0;
  if (a.data.length < ao + M * K || b.data.length < bo + K * N) throw new Error(`gemm: operands shorter than [${M}, ${K}] x [${K}, ${N}]`);
  const mPad = Math.ceil(M / GEMM_MR) * GEMM_MR;                 // rows past M: read past A (room left), C rows dropped
  // A already in the module's memory (a view a gemm call returned, rewritten in place): read where it
  // is, with B and C placed after it; otherwise copied to the start (a memcpy; the kernel reads it strided)
  const before = gemmInstance();
  const inPlace = before !== null && a.data.buffer === before.mem.buffer;
  const aPtr = inPlace ? a.data.byteOffset + ao * 4 : 0;
  const bPtr = (aPtr + mPad * K * 4 + 15) & ~15;
  const cPtr = bPtr + K * N * 4;
  const g = heap(cPtr + mPad * N * 4);                            // may grow the memory (contents kept)
  const mem = new Float32Array(g.mem.buffer);
  if (!inPlace) mem.set(a.data.subarray(ao, ao + M * K), 0);
  const [rowStride, kStride] = a.transposed ? [4, 4 * M] : [4 * K, 4];
  // k in chunks of K_CHUNK (C += A[:, chunk] B[chunk, :]): a B panel of one chunk stays in L1
  for (let k0 = 0; k0 < K; k0 += K_CHUNK) packB(b.data, bo, !!b.transposed, K, N, k0, Math.min(K_CHUNK, K - k0), mem, bPtr / 4 + k0 * N);
  for (let k0 = 0; k0 < K; k0 += K_CHUNK) {
    const t = K <= K_CHUNK ? TRIANGLE[tri] : 0;                    // a hint: over several chunks all of k is computed
    g.gemm(aPtr + k0 * kStride, bPtr + k0 * N * 4, cPtr, mPad, Math.min(K_CHUNK, K - k0), N, k0 > 0 ? 1 : 0, rowStride, kStride, t);
  }
  const view = new Float32Array(g.mem.buffer, cPtr, M * N);
  lastC = { g, byteOffset: cPtr, length: M * N };
  if (out === null) return view;
  const c = out ?? new Float32Array(M * N);
  c.set(view);
  return c;
}

/** Rows k0 .. k0 + kc of B [K, N] (or of its transpose [N, K]) -> panels [N / 8][kc][8] at `at`. */
function packB(x: Float32Array, xo: number, transposed: boolean, K: number, N: number, k0: number, kc: number, mem: Float32Array, at: number): void {
  for (let p = 0; p < N; p += NR) {
    const base = at + p * kc;
    if (transposed) {
      for (let c = 0; c < NR; c++) {
        const src = xo + (p + c) * K + k0;
        for (let k = 0; k < kc; k++) mem[base + k * NR + c] = x[src + k]!;
      }
    } else {
      for (let k = 0; k < kc; k++) {
        const src = xo + (k0 + k) * N + p;
        const dst = base + k * NR;
        for (let c = 0; c < NR; c++) mem[dst + c] = x[src + c]!;
      }
    }
  }
}

let lastC: { g: Gemm; byteOffset: number; length: number } | null = null;

/**
 * A view again of `length` floats at `byteOffset` of the module's memory: a view gemm returned is
 * detached when a later call grows the memory (its contents stay where they were).
 */
export function gemmMemoryView(byteOffset: number, length: number): Float32Array {
  const g = gemmInstance();
  if (!g || byteOffset < 0 || byteOffset + length * 4 > g.mem.buffer.byteLength) {
    throw new Error(`gemmMemoryView: [${byteOffset}, +${length * 4}) is outside the memory`);
  }
  return new Float32Array(g.mem.buffer, byteOffset, length);
}

/**
 * In place on the view the last gemm call returned (its C, still in the module's memory): c[at + j] =
 * exp(c[at + j] - shift) for j < n; returns their sum (float32 lanes, then float64 for the last n % 4).
 * The softmax numerator of attention rows (Math.exp costs ~15 ns a value; this ~4 values at once).
 */
export function expShiftLastC(at: number, n: number, shift: number): number {
  if (!lastC || at < 0 || at + n > lastC.length) throw new Error(`expShiftLastC: [${at}, ${at + n}) is outside the last product`);
  const groups = n >> 2;
  const ptr = lastC.byteOffset + at * 4;
  let sum = groups ? lastC.g.expShift(ptr, ptr, groups, shift) : 0;
  const c = new Float32Array(lastC.g.mem.buffer, lastC.byteOffset, lastC.length);
  for (let j = at + groups * 4; j < at + n; j++) { const e = Math.fround(Math.exp(c[j]! - shift)); c[j] = e; sum += e; }
  return sum;
}

// ---------------------------------------------------------------- on TF.js-wasm's own heap

/** The parts of TF.js-wasm's backend used here (tfjs-backend-wasm 4.x internals). */
interface WasmBackendLike {
  wasm: { asm?: { memory?: WasmMemory }; _malloc(bytes: number): number; _free(ptr: number): void };
  dataIdMap: { get(id: object): { memoryOffset?: number } | undefined };
  makeOutput(shape: number[], dtype: 'float32'): { dataId: object; shape: number[]; dtype: 'float32' };
}
interface HeapGemm { memory: WasmMemory; relaxed: boolean; gemm: Gemm['gemm']; scratch: number; scratchBytes: number }
let heapGemm: HeapGemm | null | undefined;

function heapInstance(backend: WasmBackendLike): HeapGemm | null {
  const memory = backend.wasm.asm?.memory;
  if (!memory || !wasmApi) return null;
  const relaxed = gemmOptions.fma && relaxedAvailable();
  if (heapGemm === null || (heapGemm && heapGemm.memory === memory && heapGemm.relaxed === relaxed)) return heapGemm;
  try {
    const module = new wasmApi.Module(buildModule(GEMM_MR, relaxed, true));
    const exports = new wasmApi.Instance(module, { env: { mem: memory } }).exports as { gemm: Gemm['gemm'] };
    // (a previous instance's scratch block stays allocated: at most one per option switch)
    heapGemm = { memory, relaxed, gemm: exports.gemm, scratch: 0, scratchBytes: 0 };
  } catch {
    heapGemm = null;
  }
  return heapGemm;
}

/** An operand in TF.js-wasm's heap: a byte address, its shape [rows, cols] as stored, and whether it is used transposed. */
export interface HeapOperand { ptr: number; transposed: boolean }

/**
 * gemm on TF.js-wasm's heap, with no copies: A read where the tensor lies, B packed into a scratch
 * block of that heap, C written into a new output buffer of the backend (`makeOutput`). Returns the
 * output's tensor info (the caller wraps it into a tensor at once), or null where this does not
 * apply (not the wasm backend's internals, M not a multiple of GEMM_MR, N not of 8: the caller
 * falls back to gemm, which copies).
 */
export function gemmOnHeap(
  backendIn: unknown, a: HeapOperand, b: HeapOperand, M: number, K: number, N: number,
): { dataId: object; shape: number[]; dtype: 'float32' } | null {
  const backend = backendIn as WasmBackendLike;
  if (M % GEMM_MR !== 0 || N % NR !== 0 || !(K > 0) || typeof backend?.makeOutput !== 'function') return null;
  const h = heapInstance(backend);
  if (!h) return null;
  const out = backend.makeOutput([M, N], 'float32');                  // may grow the heap
  const cPtr = backend.dataIdMap.get(out.dataId)?.memoryOffset;
  if (typeof cPtr !== 'number') throw new Error('gemmOnHeap: the output buffer has no address');
  const need = K * N * 4;
  if (h.scratchBytes < need) {
    if (h.scratch) backend.wasm._free(h.scratch);
    h.scratch = backend.wasm._malloc(need);                            // may grow the heap
    h.scratchBytes = need;
  }
  const heap = new Float32Array(h.memory.buffer);                      // after every allocation
  for (let k0 = 0; k0 < K; k0 += K_CHUNK) packB(heap, b.ptr / 4, b.transposed, K, N, k0, Math.min(K_CHUNK, K - k0), heap, h.scratch / 4 + k0 * N);
  const [rowStride, kStride] = a.transposed ? [4, 4 * M] : [4 * K, 4];
  for (let k0 = 0; k0 < K; k0 += K_CHUNK) {
    h.gemm(a.ptr + k0 * kStride, h.scratch + k0 * N * 4, cPtr, M, Math.min(K_CHUNK, K - k0), N, k0 > 0 ? 1 : 0, rowStride, kStride, 0);
  }
  return out;
}
