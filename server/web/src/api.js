// Reads the coordinator's read-only JSON API (server/dashboard_api.h).

// GET `path` and parse JSON; throws with the API's own error message on 4xx/5xx.
export async function getJson(path) {
  const response = await fetch(path, { cache: 'no-store', credentials: 'same-origin' });
  let body = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON: reported below with the status.
  }
  if (!response.ok) {
    throw new Error(body?.error ?? `HTTP ${response.status} for ${path}`);
  }
  return body;
}
