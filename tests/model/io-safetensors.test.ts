// safetensors: header validation, dtype conversion (F32 / F16 / BF16 read and write), streaming reads.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  decodeSafetensors, encodeSafetensors, f16ToF32, f32ToBf16, f32ToF16, readSafetensors,
  SafetensorsReader, writeSafetensors,
} from '../../core/model/safetensors.js';

function rawFile(header: unknown, data: Uint8Array, lengthOverride?: bigint): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, lengthOverride ?? BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

describe('safetensors', () => {
  const tensors = new Map([
    ['a.weight', { shape: [2, 3], data: Float32Array.from([1, -2, 3.5, 0, 1e-3, -65504]) }],
    ['b', { shape: [4], data: Float32Array.from([0.1, 0.2, 0.3, 1 / 3]) }],
    ['scalar', { shape: [], data: Float32Array.from([7]) }],
  ]);

  it('round-trips F32 exactly, with an 8-byte aligned data section', () => {
    const bytes = encodeSafetensors(tensors, { metadata: { format: 'pt', note: 'x' } });
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect((8 + n) % 8).toBe(0);
    const { header, tensors: back } = decodeSafetensors(bytes);
    expect(header.metadata).toEqual({ format: 'pt', note: 'x' });
    for (const [name, t] of tensors) {
      expect(back.get(name)!.shape).toEqual(t.shape);
      expect(Array.from(back.get(name)!.data)).toEqual(Array.from(t.data));
    }
  });

  it('reads hand-built F16 and BF16 tensors (values exactly representable)', () => {
    // F16: 1.0 = 0x3c00, -2.0 = 0xc000, 0.5 = 0x3800, 65504 = 0x7bff, smallest subnormal 2^-24 = 0x0001
    const f16 = new Uint16Array([0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001, 0x7c00]);
    // BF16: 1.0 = 0x3f80, -2.0 = 0xc000, 3.140625 = 0x4049
    const bf16 = new Uint16Array([0x3f80, 0xc000, 0x4049, 0x0000]);
    const data = new Uint8Array(f16.byteLength + bf16.byteLength);
    data.set(new Uint8Array(f16.buffer), 0);
    data.set(new Uint8Array(bf16.buffer), f16.byteLength);
    const file = rawFile({
      h: { dtype: 'F16', shape: [6], data_offsets: [0, 12] },
      b: { dtype: 'BF16', shape: [2, 2], data_offsets: [12, 20] },
    }, data);
    const { tensors: t } = decodeSafetensors(file);
    expect(Array.from(t.get('h')!.data)).toEqual([1, -2, 0.5, 65504, 2 ** -24, Infinity]);
    expect(Array.from(t.get('b')!.data)).toEqual([1, -2, 3.140625, 0]);
  });

  it('writes F16 and BF16 with round-to-nearest and reads them back', () => {
    const values = Float32Array.from([1, -2.5, 0.1, 1000.3, 1e-6, 70000, -0]);
    for (const dtype of ['F16', 'BF16'] as const) {
      const bytes = encodeSafetensors({ x: { shape: [values.length], data: values } }, { dtype });
      const { header, tensors: t } = decodeSafetensors(bytes);
      expect(header.tensors.get('x')!.dtype).toBe(dtype);
      const back = t.get('x')!.data;
      const rel = dtype === 'F16' ? 1e-3 : 8e-3;
      for (let i = 0; i < values.length; i++) {
        if (dtype === 'F16' && values[i] > 65504) { expect(back[i]).toBe(Infinity); continue; }
        if (dtype === 'F16' && Math.abs(values[i]) < 6e-5) { expect(Math.abs(back[i] - values[i])).toBeLessThan(6e-8); continue; }
        expect(Math.abs(back[i] - values[i])).toBeLessThanOrEqual(rel * Math.abs(values[i]));
      }
    }
    // Rounding: 1 + 2^-11 is halfway between two halves; ties go to even (1.0).
    expect(f32ToF16(1 + 2 ** -11)).toBe(0x3c00);
    expect(f32ToF16(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(f16ToF32(f32ToF16(-0.333251953125))).toBe(-0.333251953125);
    expect(f32ToBf16(1 + 2 ** -8)).toBe(0x3f80);      // tie → even
    expect(f32ToBf16(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(Number.isNaN(f16ToF32(f32ToF16(NaN)))).toBe(true);
  });

  it('rejects a corrupt header with an error naming the file and the key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'st-'));
    const data = new Uint8Array(16);
    const cases: [string, Uint8Array, RegExp][] = [
      ['badlen.safetensors', rawFile({}, data, 1n << 40n), /badlen\.safetensors: bad header length/],
      ['short.safetensors', new Uint8Array(5), /short\.safetensors: file is 5 bytes/],
      ['dtype.safetensors', rawFile({ w: { dtype: 'F33', shape: [4], data_offsets: [0, 16] } }, data), /dtype\.safetensors: tensor "w": unknown dtype "F33"/],
      ['range.safetensors', rawFile({ w: { dtype: 'F32', shape: [8], data_offsets: [0, 32] } }, data), /range\.safetensors: tensor "w": data_offsets \[0, 32\] run past the end/],
      ['size.safetensors', rawFile({ w: { dtype: 'F32', shape: [3], data_offsets: [0, 16] } }, data), /size\.safetensors: tensor "w": shape \[3\] of F32 needs 12 bytes/],
      ['json.safetensors', (() => { const f = rawFile({ w: 1 }, data); f[8] = 0x7b; f[9] = 0x7b; return f; })(), /json\.safetensors: header is not valid UTF-8 JSON/],
      ['overlap.safetensors', rawFile({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [2], data_offsets: [4, 12] } }, data), /overlaps/],
    ];
    for (const [name, bytes, pattern] of cases) {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      await expect(SafetensorsReader.open(path)).rejects.toThrow(pattern);
      expect(() => decodeSafetensors(bytes, name)).toThrow(pattern);
    }
  });

  it('refuses to read integer tensors as weights, naming the tensor', () => {
    const file = rawFile({ ids: { dtype: 'I64', shape: [2], data_offsets: [0, 16] } }, new Uint8Array(16));
    expect(() => decodeSafetensors(file, 'ints.safetensors')).toThrow(/ints\.safetensors: tensor "ids": dtype I64 cannot be read/);
  });

  it('streams tensors from disk and writes atomically', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'st-'));
    const path = join(dir, 'model.safetensors');
    await writeSafetensors(path, tensors, { dtype: 'F32' });
    expect(readFileSync(path)).toEqual(Buffer.from(encodeSafetensors(tensors)));
    const reader = await SafetensorsReader.open(path);
    expect(reader.names.sort()).toEqual(['a.weight', 'b', 'scalar']);
    expect(Array.from((await reader.readTensor('b')).data)).toEqual(Array.from(tensors.get('b')!.data));
    await expect(reader.readTensor('nope')).rejects.toThrow(/model\.safetensors: no tensor named "nope"/);
    await reader.close();
    const some = await readSafetensors(path, ['scalar']);
    expect([...some.keys()]).toEqual(['scalar']);
    await expect(SafetensorsReader.open(join(dir, 'missing.safetensors'))).rejects.toThrow(/missing\.safetensors: cannot open safetensors file \(ENOENT\)/);
  });
});
