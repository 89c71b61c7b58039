/// How long the tools that drive processes from outside wait for something that will happen (a line, an exit, a
/// connection) before they call it a hang: minutes, so that a loaded machine is never mistaken for a broken one,
/// and a waiter that is answered sooner pays nothing for it. Blocking work runs on a thread of its own through
/// SpoorSystem's `onThreadOfItsOwn`.
package let waitBound: Duration = .seconds(240)
