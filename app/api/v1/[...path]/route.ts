import { NotFoundError, toResponse } from "@/lib/errors";

// Anything under /api/v1 that is not an endpoint answers in the contract's error shape.
const notFound = async () => toResponse(new NotFoundError("Endpoint"));

export const GET = notFound;
export const POST = notFound;
export const PUT = notFound;
export const PATCH = notFound;
export const DELETE = notFound;
