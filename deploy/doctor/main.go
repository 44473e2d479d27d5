// Command doctor checks a running toolgate stack against its security
// model through the Docker Engine API: every container read-only, without
// capabilities, with no-new-privileges, non-root, limited, unpublished
// (but for what was asked), off the clients network (but for the gateway),
// secrets read-only and healthy; the tools network internal; the policy
// sidecar sharing a network with the gateway only and started with token
// authentication and its authorization policy. It prints a table and exits
// 1 on any violation. Then it asks every tool service whether it is ready
// (its upstream reachable, its credentials accepted) and prints OK or what
// to fix per service; readiness never changes the exit code.
//
//	go run ./deploy/doctor [-project toolgate] [-publish 127.0.0.1:8080] [-tag TAG]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

func main() {
	project := flag.String("project", envOr("COMPOSE_PROJECT_NAME", "toolgate"), "compose project name")
	publish := flag.String("publish", os.Getenv("TOOLGATE_PUBLISH"), "host address the gateway was asked to be published on")
	approvals := flag.String("approvals", os.Getenv("TOOLGATE_APPROVALS"), "host address the approval page was asked to be published on")
	tag := flag.String("tag", os.Getenv("TOOLGATE_TAG"), "tag of the project's own toolgate/* images (default: the project's name, as install.sh tags them)")
	flag.Parse()
	if *tag == "" {
		*tag = *project
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stack, err := inspect(ctx, *project)
	if err != nil {
		fmt.Fprintln(os.Stderr, "doctor:", err)
		os.Exit(2)
	}
	stack.Publish, stack.Approvals, stack.Tag = *publish, *approvals, *tag
	findings := Check(stack)
	printTable(os.Stdout, findings)
	if len(stack.Containers) == 0 {
		fmt.Fprintf(os.Stderr, "doctor: no running containers in project %q\n", *project)
		os.Exit(2)
	}
	fmt.Println()
	printReadiness(os.Stdout, readiness(ctx, stack))
	if Failed(findings) {
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// inspect reads the project's containers and networks from the engine.
func inspect(ctx context.Context, project string) (Stack, error) {
	cli, err := client.New(client.WithHostFromEnv()) // version negotiation is on by default
	if err != nil {
		return Stack{}, fmt.Errorf("docker client: %w", err)
	}
	defer cli.Close()
	label := "com.docker.compose.project=" + project
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return Stack{}, fmt.Errorf("list containers: %w", err)
	}
	s := Stack{Project: project}
	for _, c := range list.Items {
		res, err := cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
		if err != nil {
			return Stack{}, fmt.Errorf("inspect container %s: %w", c.ID, err)
		}
		s.Containers = append(s.Containers, res.Container)
	}
	nets, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return Stack{}, fmt.Errorf("list networks: %w", err)
	}
	for _, n := range nets.Items {
		s.Networks = append(s.Networks, network.Inspect{Network: n.Network})
	}
	return s, nil
}

// readiness asks every tool service of the stack for its readiness.
func readiness(ctx context.Context, s Stack) []Readiness {
	cli, err := client.New(client.WithHostFromEnv())
	if err != nil {
		return []Readiness{{Service: "doctor", Message: "docker client: " + err.Error()}}
	}
	defer cli.Close()
	return checkReadiness(ctx, cli, s)
}

// printTable writes the findings as a table, failures with their reason.
func printTable(w io.Writer, fs []Finding) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CONTAINER\tRULE\tRESULT")
	failed := 0
	for _, f := range fs {
		res := "ok"
		if !f.OK {
			res = "FAIL: " + f.Detail
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Subject, f.Rule, res)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d checks, %d failed\n", len(fs), failed)
}
