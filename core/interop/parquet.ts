// SPA's self-play SFT files (wm_train.parquet / wm_val.parquet) written and read in pure JS.
// Writer: hyparquet-writer (MIT, pure JS, no native or install-time download; the schema is given
// explicitly so `prompt` is the list<struct<content, role>> that pandas.to_parquet writes and
// SPA's sft/spa_sft_dataset.py indexes as a list of {role, content} dicts). Reader: hyparquet.
// Columns as SPA_agent/generate_sft_data.py writes them: data_source, prompt, response, ability,
// reward_model, extra_info (only prompt and response are read by the SFT trainer).
import { parquetWriteBuffer } from 'hyparquet-writer';
import { parquetReadObjects } from 'hyparquet';

export interface ChatTurn { role: string; content: string }

/** One row of wm_*.parquet. */
export interface SpaSftRow {
  data_source: string;     // "sokoban" in the release (the env id here)
  prompt: ChatTurn[];      // every message before the assistant turn, ending with a user message
  response: string;        // the assistant turn (observation/prediction replaced by the truth)
  ability: string;         // "bfs" in the release
  reward_model: string;    // constant dummy in the release: "{'ground_truth': …}"
  extra_info: string;      // constant dummy in the release
}

const utf8 = (name: string) => ({ name, type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const });

// The 3-level LIST layout of the Parquet spec (what pyarrow writes for list<struct<content, role>>):
// prompt (LIST) → list (repeated) → element (struct) → content, role.
const SCHEMA = [
  { name: 'schema', num_children: 6 },
  utf8('data_source'),
  { name: 'prompt', repetition_type: 'OPTIONAL' as const, num_children: 1, converted_type: 'LIST' as const },
  { name: 'list', repetition_type: 'REPEATED' as const, num_children: 1 },
  { name: 'element', repetition_type: 'OPTIONAL' as const, num_children: 2 },
  utf8('content'),
  utf8('role'),
  utf8('response'),
  utf8('ability'),
  utf8('reward_model'),
  utf8('extra_info'),
];

/** The rows as a parquet file (bytes). */
export function writeSpaSftParquet(rows: readonly SpaSftRow[]): Uint8Array {
  const column = <K extends keyof SpaSftRow>(name: K) => ({ name, data: rows.map((r) => r[name]) });
  const buffer = parquetWriteBuffer({
    columnData: [
      column('data_source'),
      { name: 'prompt', data: rows.map((r) => r.prompt.map((m) => ({ content: m.content, role: m.role }))) },
      column('response'), column('ability'), column('reward_model'), column('extra_info'),
    ],
    schema: SCHEMA as never,
    codec: 'SNAPPY',
  });
  return new Uint8Array(buffer);
}

/** All rows of a parquet file as plain objects (nested columns as arrays/objects). */
export async function readParquetRows(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return (await parquetReadObjects({ file })) as Record<string, unknown>[];
}
