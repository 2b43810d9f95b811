// Package host is the conductor's side of Rivet's driver plugins: it finds
// plugin binaries, starts each one out of process through go-plugin (gRPC,
// AutoMTLS, optional sha256 pin), negotiates versions, supervises it and
// routes calls to it by hardware type.
//
// Rules:
//   - Negotiation has two levels. go-plugin picks the highest common
//     protocol major; then the host reads the plugin's Info and picks, per
//     interface, the highest API version both speak that the major carries
//     (power 2 needs protocol 2), and tells the plugin (Configure). A plugin
//     with no overlap is refused with both ranges logged; the host keeps
//     running without it.
//   - Power actions go through Driver.PowerAction, which refuses what the
//     negotiated power version lacks (soft power, timeouts) without a round
//     trip, naming the plugin and what was negotiated with it.
//   - A feature is used only when the plugin advertised it; anything else
//     answers plugins.ErrNotSupported without a round trip.
//   - One supervisor per plugin. A go-plugin Client cannot restart, so a
//     crash retires the Client and the next call starts a new one (new
//     exec.Cmd), after a backoff that grows with consecutive failures. The
//     count clears only after a successful call on a process that ran for
//     StableAfter, so a plugin that crashes every few calls backs off too.
//     The call that saw the crash gets a retryable *PluginCrashedError;
//     so does, at once, a call whose deadline falls before the next restart.
//   - A plugin that fails to start is refused and not retried until its
//     binary changes.
//   - A replaced binary is noticed by polling its file; the new one is
//     started and negotiated, new calls go to it, and the old one is killed
//     once its in-flight calls drain. A new binary that fails to start
//     leaves the old one serving.
//   - The wire's client side is here, not in the driver SDK (package
//     plugins), whose exported API is the author's only: Client and
//     GRPCPlugin (what go-plugin dispenses), fromStatus turning a plugin's
//     status back into the SDK's errors (status.go), the errors only the
//     host raises (PluginCrashedError, IncompatibleError, ValidationError)
//     and PowerActor, the conductor's entry point for power actions.
//   - Plugin stderr (hclog JSON) is forwarded into the host's slog logger;
//     values under secret-looking keys are masked on the way.
package host
