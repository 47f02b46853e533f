// In-process client: the typed API straight on a dispatcher (CLI, tests). Requests and results
// go through a JSON round trip so the in-process host behaves like the others (plain JSON only).
import type { EventTopic, WorkbenchClient, WorkbenchEvent } from '../api/contract.js';
import { buildApi } from '../api/client.js';
import { fromApiError, toApiError } from '../api/errors.js';
import type { Dispatcher } from './dispatcher.js';

const plain = <T>(v: T): T => (v === undefined ? v : JSON.parse(JSON.stringify(v)) as T);

export function createInProcessClient(dispatcher: Dispatcher): WorkbenchClient {
  const api = buildApi(async (method, params) => {
    try {
      return plain(await dispatcher.call(method, plain(params)));
    } catch (err) {
      throw fromApiError(toApiError(err, method));
    }
  });
  return Object.assign(api, {
    subscribe: (topic: EventTopic, listener: (e: WorkbenchEvent) => void) => dispatcher.subscribe(topic, (e) => listener(plain(e))),
    close: () => undefined,
  });
}
