"use client";

import { useCallback, useEffect, useId, useState, type FormEvent } from "react";
import type { ActionFailure } from "@/app/action-result";

/** The props that tie a control to its error: `aria-invalid`, and `aria-describedby` naming it. */
export type FieldErrorProps = {
  "aria-invalid"?: true;
  "aria-describedby"?: string;
};

/**
 * What a failure says at the form's level: its message when it is not about input (a conflict,
 * a refusal), else the sentences of invalid fields no control in `placed` shows.
 */
export function formLevelMessages(
  failure: ActionFailure | null,
  placed: readonly string[],
): string[] {
  if (!failure) return [];
  if (!failure.fieldErrors) return [failure.message];
  return Object.entries(failure.fieldErrors)
    .filter(([key]) => !placed.includes(key))
    .map(([, sentence]) => sentence);
}

/** The id of the message under a control whose id is `controlId`. */
export const errorIdFor = (controlId: string) => `${controlId}-error`;

/**
 * A form's refused submission, shown where it belongs: each field's sentence under that field
 * (`fields` lists the keys this form shows on a control, as the server action names them), the
 * rest in the form-level message. Focus moves to the first invalid control after each refusal;
 * a field's message goes away as soon as that field changes (`onChange` on the form, matched by
 * the control's `name`); spread `formProps` on the form.
 */
export function useFieldErrors(fields: readonly string[]) {
  // Found by attribute, not a ref: the returned object is read during render, which a ref in it
  // would make a ref read (react-hooks/refs).
  const formKey = useId();
  const [failure, setFailure] = useState<ActionFailure | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [refusals, setRefusals] = useState(0);

  useEffect(() => {
    if (refusals === 0) return;
    document
      .querySelector<HTMLElement>(
        `[data-form-errors="${CSS.escape(formKey)}"] [aria-invalid="true"]`,
      )
      ?.focus();
  }, [refusals, formKey]);

  const fail = useCallback((result: ActionFailure) => {
    setFailure(result);
    setErrors(result.fieldErrors ?? {});
    setRefusals((count) => count + 1);
  }, []);

  const reset = useCallback(() => {
    setFailure(null);
    setErrors({});
  }, []);

  const clear = useCallback((name: string) => {
    setErrors((current) => {
      if (!(name in current)) return current;
      const { [name]: _cleared, ...rest } = current;
      return rest;
    });
  }, []);

  const onChange = useCallback(
    (event: FormEvent<HTMLFormElement>) => {
      const name = (event.target as { name?: unknown }).name;
      if (typeof name === "string" && name !== "") clear(name);
    },
    [clear],
  );

  /** Props for the control showing field `name`, whose id is `controlId`; `hintId` is its help text. */
  function field(name: string, controlId: string, hintId?: string): FieldErrorProps {
    const invalid = errors[name] !== undefined;
    // The problem first, then the help: a screen reader says what to fix before the rest.
    const describedBy = [invalid ? errorIdFor(controlId) : undefined, hintId]
      .filter(Boolean)
      .join(" ");
    return {
      ...(invalid ? { "aria-invalid": true as const } : {}),
      ...(describedBy ? { "aria-describedby": describedBy } : {}),
    };
  }

  // What no control shows: a failure that is not about input (a conflict), or a field no control
  // carries. Field errors that were cleared by editing are gone from here too.
  const formFailure: ActionFailure | null =
    failure && failure.fieldErrors ? { ...failure, fieldErrors: errors } : failure;

  return {
    /** spread on the <form>: `data-form-errors` (how focus finds it) and the `onChange` that clears */
    formProps: { "data-form-errors": formKey, onChange },
    fail,
    reset,
    clear,
    onChange,
    field,
    /** the sentence for field `name`, if it has one */
    errorOf: (name: string): string | undefined => errors[name],
    formFailure,
    placed: fields,
  };
}
