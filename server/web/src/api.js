// Reads the coordinator's read-only JSON API (server/dashboard_api.h).

// Access control: when the coordinator requires a read-only token (see
// HttpAuthorizer in server/dashboard.h), open the page once as ?token=... : the
// token is kept for this tab, dropped from the address bar, and sent as a
// Bearer header with every API call.
const TOKEN_KEY = 'mtune-token';
{
  const url = new URL(location.href);
  const token = url.searchParams.get('token');
  if (token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    url.searchParams.delete('token');
    history.replaceState(null, '', url);
  }
}

// GET `path` and parse JSON; throws with the API's own error message on 4xx/5xx.
export async function getJson(path) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const response = await fetch(path, { cache: 'no-store', headers });
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
