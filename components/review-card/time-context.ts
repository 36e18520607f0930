"use client";

import { createContext, useContext } from "react";
import type { TimeFormat } from "./format";

/**
 * The zone and locale the card writes times (and costs) in, from ReviewCardProps. Empty: the
 * browser's own zone and locale.
 */
export const TimeFormatContext = createContext<TimeFormat>({});

export function useTimeFormat(): TimeFormat {
  return useContext(TimeFormatContext);
}
