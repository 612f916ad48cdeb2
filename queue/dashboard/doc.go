// Package dashboard serves a web dashboard for a [queue.Group]: an
// [http.Handler] that shows the group's queues and their counts, lists
// its ready, delayed, running and dead tasks page by page, shows one
// task (payload, attempts, last error), and acts on them: requeue a dead
// task, delete a task, run a delayed task now, pause and resume a queue;
// and in bulk, each behind a confirm box that must be ticked: delete all
// ready tasks of a queue ([queue.Group.Purge]), requeue or delete all
// dead tasks ([queue.Group.RequeueAllDead], [queue.Group.DeleteAllDead]).
//
// Pages are rendered on the server with html/template from embedded
// templates and work without JavaScript; every action is a POST form.
// Nothing is loaded from elsewhere, and no dependency is added.
//
//	g, _ := queue.New(rdb, "mail")
//	h, err := dashboard.New(g, dashboard.WithBasePath("/queues"), dashboard.WithQueues("default", "critical"))
//	if err != nil { ... }
//	mux.Handle("/queues/", h) // no http.StripPrefix: the handler knows its base path
//
// # Queues
//
// A group does not record the names of its queues; the overview shows those
// given with [WithQueues], and any paused queue. The ready tasks of any
// other queue are listed by typing its name in the overview's form.
//
// # Requests
//
// A GET never changes anything. A POST (an action) is refused with 403
// Forbidden, changing nothing, unless
//
//   - it carries the form field "csrf" holding the HMAC-SHA-256, under the
//     handler's secret, of the value of its "ria_dashboard_csrf" cookie
//     (which every page sets, SameSite=Strict, HttpOnly), compared in
//     constant time: a page of another site can neither read the cookie
//     nor compute the token, even if it can set cookies (a sibling
//     subdomain), since it lacks the secret;
//   - and its Origin header, if any, names the request's own host (the Host
//     header: a proxy in front must pass it on), and its Sec-Fetch-Site
//     header, if any, is "same-origin".
//
// The secret is random per handler unless [WithSecret] sets one (handlers
// of several processes behind one address must share it). Pages are served
// with a Content-Security-Policy that forbids scripts, frames and forms
// aimed elsewhere. The dashboard has no login: mount it behind the
// authentication your service uses.
//
// # Round trips
//
// The overview costs one round trip ([queue.Group.Stats]), two when a
// paused queue is not among [WithQueues] (its ready count); a list page
// two ([queue.Group.Stats] for the totals, [queue.Group.List]; a page
// past the last one redirects to the last one); a task
// page one ([queue.Group.Task]); an action one, a bulk action one per
// [queue.MaxBulkBatch] tasks.
package dashboard
