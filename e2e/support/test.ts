import { test as base, type BrowserContext, type ConsoleMessage } from "@playwright/test";

// Every spec's `test`: Playwright's, plus a check that nothing on any page broke the
// Content-Security-Policy (an inline script without the nonce, a stray origin). Chromium reports
// each violation on the console; a page the policy broke would otherwise pass any test that does
// not happen to need the blocked script. A test that provokes a violation on purpose names it in
// `expectedCspViolations`.

export type CspOptions = { expectedCspViolations: RegExp | null };

export const test = base.extend<CspOptions & { cspViolations: string[] }>({
  expectedCspViolations: [null, { option: true }],
  cspViolations: [
    async ({ context, browser, expectedCspViolations }, use) => {
      const violations: string[] = [];
      const listen = (watched: BrowserContext) =>
        watched.on("console", (message: ConsoleMessage) => {
          const text = message.text();
          if (!/Content Security Policy/i.test(text)) return;
          if (expectedCspViolations?.test(text)) return;
          violations.push(`${message.page()?.url() ?? "?"}: ${text}`);
        });
      listen(context);
      // Tests that open contexts of their own (two reviewers at once) are watched too.
      const newContext = browser.newContext.bind(browser);
      browser.newContext = async (...args) => {
        const opened = await newContext(...args);
        listen(opened);
        return opened;
      };
      await use(violations);
      browser.newContext = newContext;
      base.expect(violations, "Content-Security-Policy violations").toEqual([]);
    },
    { auto: true },
  ],
});

export { expect } from "@playwright/test";
