"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import type { ActionFailure, ActionResult } from "@/app/action-result";

/**
 * What a settings panel shows after a server action: the failure (for FormError) or a status line,
 * with the page's server data refreshed on success.
 */
export function useActionOutcome() {
  const router = useRouter();
  const [failure, setFailure] = useState<ActionFailure | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  function done(result: ActionResult, message: string) {
    if (!result.ok) return void setFailure(result);
    setFailure(null);
    setStatus(message);
    router.refresh();
  }
  return { failure, status, done };
}
