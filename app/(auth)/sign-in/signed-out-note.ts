// What the sign-in page says to someone who just signed out everywhere (components/credentials/
// reviewer-tokens.tsx sends them here with the counts), so they do not land on a bare form and
// wonder whether it worked. Only digits are read from the address: nothing typed into a link
// becomes page text.

const COUNT = /^\d{1,6}$/;

export function signedOutNote(params: {
  "signed-out"?: string | string[];
  sessions?: string | string[];
  tokens?: string | string[];
}): string | null {
  if (params["signed-out"] !== "everywhere") return null;
  const count = (value: string | string[] | undefined) =>
    typeof value === "string" && COUNT.test(value) ? Number(value) : null;
  const sessions = count(params.sessions);
  const tokens = count(params.tokens);
  const ended =
    sessions === null
      ? "every session of yours ended"
      : `${sessions} ${sessions === 1 ? "session" : "sessions"} of yours ended`;
  const revoked =
    tokens === null || tokens === 0
      ? " Your personal tokens still work."
      : ` ${tokens} personal ${tokens === 1 ? "token was" : "tokens were"} revoked.`;
  return `You signed out everywhere: ${ended}, on every device and browser, this one included.${revoked} Sign in again to go on.`;
}
