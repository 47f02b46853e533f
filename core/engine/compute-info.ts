// The torch backend's availability for the host (system.info), from the train layer's light probe.
export { torchBackendInfo, autoWasmWorkers } from '../train/compute-probe.js';
