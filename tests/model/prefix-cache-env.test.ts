// SPA_TORCH_PREFIX_CACHE_MB, the torch worker's generation prefix cache budget (docs/compute.md): 2048 MB unless set, 0 turns
// it off, anything but a whole number of MB is refused with the reason. The cache itself: tests/torch/prefix_cache_check.py.
import { afterEach, describe, expect, it } from 'vitest';
import { prefixCacheMb } from '../../core/model/torch/runtime.js';

const saved = process.env.SPA_TORCH_PREFIX_CACHE_MB;
afterEach(() => {
  if (saved === undefined) delete process.env.SPA_TORCH_PREFIX_CACHE_MB;
  else process.env.SPA_TORCH_PREFIX_CACHE_MB = saved;
});

describe('SPA_TORCH_PREFIX_CACHE_MB', () => {
  it('defaults to 2048, reads a number of MB, 0 is off, bad values are refused', () => {
    delete process.env.SPA_TORCH_PREFIX_CACHE_MB;
    expect(prefixCacheMb()).toBe(2048);
    process.env.SPA_TORCH_PREFIX_CACHE_MB = ' 512 ';
    expect(prefixCacheMb()).toBe(512);
    process.env.SPA_TORCH_PREFIX_CACHE_MB = '0';
    expect(prefixCacheMb()).toBe(0);
    for (const bad of ['lots', '-1', '1.5']) {
      process.env.SPA_TORCH_PREFIX_CACHE_MB = bad;
      expect(() => prefixCacheMb()).toThrow(`SPA_TORCH_PREFIX_CACHE_MB=${bad}: use a whole number of MB (0 turns the cache off)`);
    }
  });
});
