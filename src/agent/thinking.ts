const THINK_BLOCK = /<think\b[^>]*>[\s\S]*?<\/think\s*>/gi;
const THINK_OPEN = /<think\b[^>]*>/i;
const THINK_CLOSE = /<\/think\s*>/gi;

/**
 * The answer in a reasoning model's text (DeepSeek R1, Qwen3, QwQ and others served through an
 * OpenAI-compatible endpoint write their reasoning into the content as `<think>…</think>`):
 * every closed block is removed; text before a lone `</think>` is reasoning too (servers that
 * strip the opening tag); an unclosed `<think>` hides the rest (the model is still thinking, or
 * was cut off inside it). Leading white space left by a removed block goes as well. Text without
 * a think tag is returned as it is.
 */
export function withoutThinking(text: string): string {
  if (!text.includes('think')) return text;
  let answer = text.replace(THINK_BLOCK, '');
  const closes = [...answer.matchAll(THINK_CLOSE)];
  const lastClose = closes.at(-1);
  if (lastClose !== undefined) answer = answer.slice((lastClose.index as number) + lastClose[0].length);
  const open = answer.search(THINK_OPEN);
  if (open !== -1) answer = answer.slice(0, open);
  return answer === text ? text : answer.trimStart();
}
