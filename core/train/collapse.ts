// Collapse signals over a set of responses (RAGEN's "echo trap" and template collapse):
//   diversity        distinct responses / responses, and distinct character bigrams / bigrams
//   repeatedRuns     longest run of one repeated character (or 2–4 char unit) per response
//   inputDependence  does the response still depend on the input? 1 − share of first-turn answers
//                    that the model also gives, verbatim, on a different puzzle
// Pure functions over strings; the eval stage feeds them the episodes' responses.

export interface CollapseInput { puzzle: string; turn: number; response: string }

export interface CollapseSignals {
  responses: number;
  distinctResponseRatio: number;   // distinct / total (1 = all different)
  distinctBigramRatio: number;     // distinct char bigrams / total bigrams over all responses
  meanLongestRun: number;          // mean over responses of the longest repeated-unit run (in characters)
  repeatedRunRate: number;         // share of responses with a repeated-unit run of ≥ runThreshold characters
  inputDependence: number;         // 1 − share of first-turn answers also given verbatim to another puzzle
  crossPuzzleAnswerOverlap: number;// that share itself
}

/** Longest stretch made of one unit (length 1–4) repeated back to back, in characters (≥ 2 repeats). */
export function longestRepeatedRun(text: string): number {
  let best = 0;
  for (let unit = 1; unit <= 4; unit++) {
    let run = 0;
    for (let i = unit; i < text.length; i++) {
      if (text[i] === text[i - unit]) { run++; best = Math.max(best, run + unit); } else run = 0;
    }
  }
  return best;
}

export function collapseSignals(items: CollapseInput[], answers: Array<{ puzzle: string; answer: string }> = [], runThreshold = 12): CollapseSignals {
  const n = items.length;
  const distinct = new Set(items.map((i) => i.response)).size;
  let bigrams = 0;
  const bigramSet = new Set<string>();
  let runSum = 0, runHits = 0;
  for (const { response } of items) {
    for (let i = 1; i < response.length; i++) { bigrams++; bigramSet.add(response.slice(i - 1, i + 1)); }
    const run = longestRepeatedRun(response);
    runSum += run;
    if (run >= runThreshold) runHits++;
  }
  const byAnswer = new Map<string, Set<string>>();
  for (const { puzzle, answer } of answers) {
    const key = answer.trim().toLowerCase();
    const set = byAnswer.get(key) ?? new Set<string>();
    set.add(puzzle);
    byAnswer.set(key, set);
  }
  let shared = 0;
  for (const { answer } of answers) if ((byAnswer.get(answer.trim().toLowerCase())?.size ?? 0) > 1) shared++;
  const overlap = answers.length === 0 ? 0 : shared / answers.length;
  return {
    responses: n,
    distinctResponseRatio: n === 0 ? 0 : distinct / n,
    distinctBigramRatio: bigrams === 0 ? 0 : bigramSet.size / bigrams,
    meanLongestRun: n === 0 ? 0 : runSum / n,
    repeatedRunRate: n === 0 ? 0 : runHits / n,
    inputDependence: 1 - overlap,
    crossPuzzleAnswerOverlap: overlap,
  };
}
