package web_test

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/web"
)

// The dashboard mounted under /admin/resque/ of a program's own server,
// with an operator signing in with basic auth (or a script sending the
// secret as a bearer token).
func ExampleHandler() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	h, err := web.Handler(web.Options{
		Client:   c,
		BasePath: "/admin/resque/",
		Users:    []web.User{{Name: "ops", Role: web.RoleOperator, Secret: os.Getenv("RESQUE_WEB_OPS_SECRET")}},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/resque/", h)
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}

// A users file: one user a line, NAME ROLE SECRET.
func ExampleParseUsers() {
	users, err := web.ParseUsers(strings.NewReader(`
# name  role      secret
ann     admin     sha256:2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b
ci      operator  ci-token-0123456789
`))
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range users {
		fmt.Println(u.Name, u.Role)
	}
	// Output:
	// ann admin
	// ci operator
}
