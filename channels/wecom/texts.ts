/**
 * What WeCom users read from this adapter itself (reference §6.7; the full-width parentheses
 * and the space in the image text are the reference's, exact). The acknowledgement is
 * `channels.wecom.working_message`.
 */
export const WECOM_TEXTS = {
  /** Between the text and the quoted message: `<text>\nQuote message: <quote>`. */
  quotePrefix: '\nQuote message: ',
  imageOnly: '（receive image ）',
  fileOnly: '（receive file）',
  mixedWithoutText: '（receive image/file）',
} as const;
