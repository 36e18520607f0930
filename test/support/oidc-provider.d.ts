// The few parts of the `oidc-provider` package (which ships no types) that test/support/oidc-idp.ts
// uses.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  type Handler = (req: IncomingMessage, res: ServerResponse) => unknown;

  export interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  export interface KoaContextWithOIDC {
    oidc: {
      client?: { clientId: string };
      session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      provider: Provider;
    };
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    Grant: {
      new (init: { clientId: string; accountId: string }): Grant;
      find(id: string): Promise<Grant | undefined>;
    };
    callback(): Handler;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<unknown>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
  }
}
