// Child of errors.test.ts: loads a model on torch, scores a row, disposes it (the worker goes idle,
// unref'd) and prints "done". Exits 0 only if nothing awaited after dispose waits on the idle worker.
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-cpu';
import { TorchRuntime } from '../../core/model/torch/runtime.js';
import { probeTorch } from '../../core/model/torch/worker-client.js';

await tf.setBackend('cpu');
const rt = await TorchRuntime.fromFolder(process.argv[2]!, { probe: probeTorch(), threads: 1 });
await rt.tokenStats([{ ids: [1, 2, 3, 4] }], false);
await rt.dispose();
await new Promise((r) => setTimeout(r, 50));
process.stdout.write('done\n');
