// Entry of the pipeline's data-parallel worker threads (TF.js wasm, core/model/workers/): registers
// the pipeline's losses, then runs the worker (which answers its parent port once imported).
// From a checkout it is started from this source through tsx; the desktop build bundles it as
// dist-electron/dp-worker.js (build/build-electron.mjs), where core/ sources do not ship.
import './rl-algorithms.js';   // the RL table, and with it every loss its rows register
import '../model/workers/dp-worker.js';
