// The "nothing moves" bootstrap turn (stages.bootstrap.prediction = 'copy'; issue 23): random legal actions, <observation> =
// the true current state, <prediction> = the same state again, as if no action had any effect. A base trained on it reads
// and copies the state into both spans and knows nothing of the dynamics: a neutral start for learning p(s'|s, a). The
// counterfactual bootstrap (groundedBootstrapResponse, the default) instead writes the state after *other* random actions,
// which teaches the base to ignore its plan when it writes the prediction (../shared/reference/science-review.md (b)).
import { randomWellFormedResponse, type EpisodeSession } from '../prompts/session.js';
import type { Rng } from '../util/rng.js';

export function nothingMovesResponse(session: EpisodeSession, rng: Rng): string {
  const reply = randomWellFormedResponse(session, rng);
  if (session.responseFormat === 'plain') return reply;
  const state = session.stateText();
  return reply.replace(/<prediction>[\s\S]*?<\/prediction>/, () => `<prediction>\n${state}\n</prediction>`);
}
