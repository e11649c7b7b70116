package web

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed static
var staticFS embed.FS

// contentSecurityPolicy allows the dashboard's own stylesheet, script and
// event stream, and nothing else: no inline script or style, no frames.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func (s *server) routes() http.Handler {
	app := http.NewServeMux()
	page := func(pattern string, h http.HandlerFunc) { app.Handle(pattern, h) }

	page("GET /{$}", s.overviewPage)
	page("GET /queues", s.queuesPage)
	page("GET /queues/{queue}", s.queuePage)
	page("POST /queues/{queue}/remove", s.queueRemoveForm)
	page("POST /queues/{queue}/enqueue", s.queueEnqueueForm)
	page("GET /queues/{queue}/clear", s.queueClearConfirm)
	page("POST /queues/{queue}/clear", s.queueClearForm)
	page("GET /failed", s.failedPage)
	page("GET /failed/bulk", s.failedBulkPreview)
	page("POST /failed/bulk", s.failedBulkForm)
	page("POST /failed/selected", s.failedSelectedForm)
	page("GET /failed/{index}", s.failedEntryPage)
	page("POST /failed/{index}/{op}", s.failedOneForm)
	page("GET /delayed", s.delayedPage)
	page("POST /delayed/remove", s.delayedRemoveOneForm)
	page("POST /delayed/queue_now", s.delayedQueueNowForm)
	page("GET /delayed/bulk", s.delayedBulkPreview)
	page("POST /delayed/bulk", s.delayedBulkForm)
	page("GET /plans", s.plansPage)
	page("POST /plans", s.planAddForm)
	page("GET /plans/{id}", s.planPage)
	page("POST /plans/{id}/queue_now", s.planQueueNowForm)
	page("POST /plans/{id}/{op}", s.planForm)
	page("GET /schedules", s.schedulesPage)
	page("POST /schedules/queue_now", s.scheduleQueueNowForm)
	page("GET /unique", s.uniquePage)
	page("POST /unique/clear", s.uniqueClearForm)
	page("POST /queues/{queue}/pause", s.queuePauseForm("pause"))
	page("POST /queues/{queue}/resume", s.queuePauseForm("resume"))
	page("GET /serial", s.serialPage)
	page("POST /serial/release", s.serialReleaseForm)
	page("GET /mass", s.massPage)
	page("POST /mass/{op}", s.massForm)
	page("GET /calendars", s.calendarsPage)
	page("GET /calendars/{name}", s.calendarPage)
	page("POST /calendars/{name}/remove", s.calendarRemoveForm)
	page("POST /calendars", s.calendarAddForm)
	page("GET /workers", s.workersPage)
	page("POST /workers/cancel", s.workerCancelForm)
	page("GET /workers/process/stop", s.processStopConfirm)
	page("POST /workers/process/{op}", s.processForm)
	page("GET /audit", s.auditPage)
	page("GET /search", s.searchPage)
	page("GET /tags", s.tagsPage)
	page("GET /tags/{tag}", s.tagPage)
	page("GET /events", s.events)
	page("GET /job-events", s.jobEventsPage)

	page("GET /api/whoami", s.apiWhoami)
	page("GET /api/overview", s.apiOverview)
	page("GET /api/history", s.apiHistory)
	page("GET /api/queues", s.apiQueues)
	page("GET /api/queues/{queue}", s.apiQueue)
	page("POST /api/queues/{queue}/remove", s.apiQueueRemove)
	page("POST /api/queues/{queue}/enqueue", s.apiQueueEnqueue)
	page("POST /api/queues/{queue}/clear", s.apiQueueClear)
	page("GET /api/failed", s.apiFailed)
	page("GET /api/failed/count", s.apiFailedCount)
	page("GET /api/failed/{index}", s.apiFailedEntry)
	page("POST /api/failed/{index}/{op}", s.apiFailedOne)
	page("POST /api/failed/{op}", s.apiFailedBulk)
	page("GET /api/delayed", s.apiDelayed)
	page("GET /api/delayed/count", s.apiDelayedCount)
	page("POST /api/delayed/remove", s.apiDelayedRemoveOne)
	page("POST /api/delayed/queue_now", s.apiDelayedQueueNow)
	page("POST /api/delayed/remove_all", s.apiDelayedRemoveAll)
	page("GET /api/plans", s.apiPlans)
	page("POST /api/plans", s.apiPlanAdd)
	page("GET /api/plans/{id}", s.apiPlan)
	page("POST /api/plans/{id}/queue_now", s.apiPlanQueueNow)
	page("POST /api/plans/{id}/{op}", s.apiPlanAction)
	page("GET /api/schedules", s.apiSchedules)
	page("POST /api/schedules/{name}/queue_now", s.apiScheduleQueueNow)
	page("GET /api/unique", s.apiUnique)
	page("GET /api/unique/{uid}", s.apiUniqueOne)
	page("POST /api/unique/{uid}/clear", s.apiUniqueClear)
	page("POST /api/queues/{queue}/pause", s.apiQueuePause("pause"))
	page("POST /api/queues/{queue}/resume", s.apiQueuePause("resume"))
	page("GET /api/serial", s.apiSerial)
	page("POST /api/serial/{queue}/release", s.apiSerialRelease)
	page("GET /api/mass", s.apiMass)
	page("POST /api/mass/{op}", s.apiMassAction)
	page("GET /api/calendars", s.apiCalendars)
	page("GET /api/calendars/{name}", s.apiCalendar)
	page("POST /api/calendars/{name}/remove", s.apiCalendarRemove)
	page("POST /api/calendars", s.apiCalendarAdd)
	page("GET /api/workers", s.apiWorkers)
	page("POST /api/processes/{process}/{op}", s.apiProcessAction)
	page("GET /api/audit", s.apiAudit)
	page("GET /api/search", s.apiSearch)
	page("GET /api/tags", s.apiTags)
	page("GET /api/tags/{tag}", s.apiTag)
	page("GET /api/events", s.events)
	page("GET /api/job-events", s.apiJobEvents)
	page("/", func(w http.ResponseWriter, r *http.Request) { s.fail(w, r, http.StatusNotFound, "no such page") })

	root := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	root.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	root.HandleFunc("GET /healthz", s.health)
	root.Handle("/", s.withAuth(app))

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusForbidden, "cross-origin request refused")
	}))
	prefix := strings.TrimSuffix(s.base, "/")
	inner := http.StripPrefix(prefix, securityHeaders(cop.Handler(root)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == prefix && prefix != "" {
			http.Redirect(w, r, s.base, http.StatusMovedPermanently)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// health answers 200 "ok" when Redis answers, 503 otherwise; it needs no
// credentials and says nothing else.
func (s *server) health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err := s.c.Ping(r.Context()); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("redis unavailable\n"))
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}
