// The renderer's client exposes every namespace of the contract (inspect.* and probe.* were
// `undefined` in the page once: the namespace list was written by hand).
import { describe, expect, it } from 'vitest';
import { apiMethodNames } from '../../core/api/contract.js';
import { createClient, type Transport } from '../../renderer/src/api/client.js';

describe('renderer client', () => {
  it('reaches every method of the contract through its namespace', async () => {
    const calls: string[] = [];
    const transport: Transport = {
      kind: 'memory',
      call: async (method: string) => { calls.push(method); return null; },
      subscribe: () => () => undefined,
      onState: () => () => undefined,
    } as unknown as Transport;
    const client = createClient(transport) as unknown as Record<string, Record<string, (p?: unknown) => Promise<unknown>> | undefined>;
    for (const name of apiMethodNames()) {
      const [ns, method] = name.split('.') as [string, string];
      expect(client[ns], `namespace ${ns}`).toBeTypeOf('object');
      await client[ns]![method]!({});
    }
    expect(calls).toEqual(apiMethodNames());
  });
});
