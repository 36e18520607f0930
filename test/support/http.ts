// A small JSON client for API tests: every call resolves to the status and parsed body.

export type ApiResponse<T = any> = { status: number; body: T; headers: Headers };

export type ApiClient = {
  get: <T = any>(path: string, headers?: Record<string, string>) => Promise<ApiResponse<T>>;
  post: <T = any>(
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => Promise<ApiResponse<T>>;
  raw: (path: string, init?: RequestInit) => Promise<Response>;
};

export function apiClient(baseUrl: string, token?: string): ApiClient {
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const request = async (path: string, init: RequestInit): Promise<ApiResponse> => {
    const response = await fetch(`${baseUrl}/api/v1${path}`, init);
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body, headers: response.headers };
  };
  return {
    get: (path, headers = {}) => request(path, { headers: { ...auth, ...headers } }),
    post: (path, body, headers = {}) =>
      request(path, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    raw: (path, init = {}) =>
      fetch(`${baseUrl}/api/v1${path}`, {
        ...init,
        headers: { ...auth, ...(init.headers as Record<string, string>) },
      }),
  };
}

/** A one-call action batch body, for tests that only need "something to decide". */
export function refundBatch(overrides: Record<string, unknown> = {}) {
  return {
    calls: [
      {
        toolCallId: `call-${Math.random().toString(36).slice(2, 10)}`,
        toolName: "refund_order",
        args: { orderId: "A-1001", amount: 25 },
        summary: "Refund order A-1001",
        risks: ["Money leaves the company"],
        costEstimate: 25,
      },
    ],
    ...overrides,
  };
}
