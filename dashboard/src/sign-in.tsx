import { useState } from 'preact/hooks';
import { ApiError, signIn, type Session } from './api';

/** One password field: API key or access token (merchant), or the operator key. */
export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main class="sign-in">
      <h1>Sign in</h1>
      <form
        method="post"
        action="#"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget as HTMLFormElement;
          const input = form.elements.namedItem('password') as HTMLInputElement;
          setBusy(true);
          setError(null);
          try {
            const session = await signIn(input.value);
            input.value = '';
            onSignedIn(session);
          } catch (err) {
            setError(err instanceof ApiError && err.status === 401 ? 'That key is not valid.' : (err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        <input type="text" name="username" autocomplete="username" value="dashboard" hidden readOnly />
        <label for="key">API key, access token or operator key</label>
        <input id="key" name="password" type="password" autocomplete="current-password" required aria-describedby={error ? 'sign-in-error' : undefined} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error && (
          <p id="sign-in-error" role="alert" class="error">
            {error}
          </p>
        )}
      </form>
      <section class="where-keys" aria-labelledby="where-keys-title">
        <h2 id="where-keys-title">Where do I get a key?</h2>
        <ul>
          <li>
            <strong>Sandbox:</strong> the service prints the sandbox merchant’s API key when it starts, in its banner under “Sandbox merchant” (the line “API
            key”).
          </li>
          <li>
            <strong>Merchants:</strong> your operator creates your account and gives you an access token; with it you create API keys (
            <code>POST /management/api-keys</code>, or “API keys” here once signed in).
          </li>
          <li>
            <strong>Operators:</strong> the operator key is <code>PAYMENTS_OPERATOR_KEY</code>, or the one the service generated in <code>operator.key</code> in
            its data directory.
          </li>
        </ul>
      </section>
      <p class="hint">The key is exchanged for a session on the server; it is not kept in this browser.</p>
    </main>
  );
}
