"use client";

import { createAuthClient } from "better-auth/react";

/** better-auth's browser client; it talks to /api/auth on the page's own origin. */
export const authClient = createAuthClient();
