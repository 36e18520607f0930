import { parseTrustedProxies } from "@/lib/auth/client-address";
import { configuredSecretKeys } from "@/lib/auth/sealed-secrets";
import { configuredAllowList, configuredPlainHttpHosts } from "@/lib/webhooks/callback-target";
import { SETTINGS, settingProblem, setting, type SettingName } from "@/lib/config/settings";

// The start-up check of the whole configuration: every setting against its schema, then the
// settings whose format their own module reads (address lists, keys), so one start names every
// mistake at once instead of the first, or instead of failing on the first request that reads it.

/** Settings whose module parses them further; each throws an Error that names the variable. */
const DEEP_CHECKS: Partial<Record<SettingName, () => unknown>> = {
  TRUSTED_PROXIES: () => parseTrustedProxies(),
  CALLBACK_ALLOWED_HOSTS: () => configuredAllowList(),
  MCP_GATEWAY_PLAIN_HTTP_HOSTS: () => configuredPlainHttpHosts(),
  COUNTERSIGN_SECRET_KEY: () => configuredSecretKeys(),
};

/** One line per unusable setting; empty when the configuration is fine. */
export function configProblems(): string[] {
  const problems: string[] = [];
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const problem = settingProblem(name);
    if (problem) {
      problems.push(problem);
      continue;
    }
    try {
      DEEP_CHECKS[name]?.();
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  }
  const headers = setting("HEADERS_TIMEOUT_MS");
  if (!settingProblem("REQUEST_TIMEOUT_MS") && setting("REQUEST_TIMEOUT_MS") < headers)
    problems.push(
      `REQUEST_TIMEOUT_MS: must be at least HEADERS_TIMEOUT_MS (${headers}), since the whole request includes its headers`,
    );
  return problems;
}

/** The message a start with a bad configuration ends with (null when it is fine). */
export function configReport(): string | null {
  const problems = configProblems();
  if (problems.length === 0) return null;
  return [
    `Countersign cannot start: ${problems.length === 1 ? "a setting is" : `${problems.length} settings are`} not usable.`,
    ...problems.map((problem) => `  - ${problem}`),
    "Fix them in the environment or in .env (.env.example lists every setting), then start again.",
  ].join("\n");
}
