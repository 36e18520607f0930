"use server";

import { z } from "zod";
import { publicAction } from "@/app/server-action";
import { redeemLink } from "@/lib/people/person-links";

/**
 * Sets the password of an invite or a reset link. Public by necessity: the one-time token in the
 * input is the authority (redeemLink checks it, uses it up, and writes its event).
 */
export const redeemLinkAction = publicAction([z.unknown()], ([input]) => redeemLink(input));
