package main

import (
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// clusterManifests is where the production layout of a cluster lives.
const clusterManifests = "../../deploy/cluster/kubernetes"

// k8sObject is what the test reads of a Kubernetes manifest's object.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		// Service
		Type      string           `yaml:"type"`
		ClusterIP string           `yaml:"clusterIP"`
		Selector  yaml.Node        `yaml:"selector"` // a Service's map, a StatefulSet's matchLabels
		Ports     []k8sServicePort `yaml:"ports"`
		// StatefulSet
		ServiceName string `yaml:"serviceName"`
		Replicas    int    `yaml:"replicas"`
		Template    struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				InitContainers []k8sContainer `yaml:"initContainers"`
				Containers     []k8sContainer `yaml:"containers"`
				Volumes        []struct {
					Name      string `yaml:"name"`
					ConfigMap *struct {
						Name string `yaml:"name"`
					} `yaml:"configMap"`
					Secret *struct {
						SecretName string `yaml:"secretName"`
					} `yaml:"secret"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
		VolumeClaimTemplates []struct {
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		} `yaml:"volumeClaimTemplates"`
	} `yaml:"spec"`
}

type k8sServicePort struct {
	Name       string `yaml:"name"`
	Port       int    `yaml:"port"`
	TargetPort string `yaml:"targetPort"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct{ Name, Key string } `yaml:"secretKeyRef"`
			FieldRef     *struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	EnvFrom []struct {
		ConfigMapRef *struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
	} `yaml:"envFrom"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	VolumeMounts []struct {
		Name string `yaml:"name"`
	} `yaml:"volumeMounts"`
}

// selector is a Service's selector, or a StatefulSet's matchLabels.
func (o *k8sObject) selector(t *testing.T) map[string]string {
	t.Helper()
	var m map[string]string
	switch o.Kind {
	case "Service":
		if err := o.Spec.Selector.Decode(&m); err != nil {
			t.Fatalf("%s %s: selector: %v", o.Kind, o.Metadata.Name, err)
		}
	case "StatefulSet":
		var s struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		}
		if err := o.Spec.Selector.Decode(&s); err != nil {
			t.Fatalf("%s %s: selector: %v", o.Kind, o.Metadata.Name, err)
		}
		m = s.MatchLabels
	}
	return m
}

// loadManifests decodes every object of every YAML file in dir.
func loadManifests(t *testing.T, dir string) []k8sObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	var out []k8sObject
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		for i := 0; ; i++ {
			var n yaml.Node
			if err := dec.Decode(&n); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: document %d: %v", f, i, err)
			}
			var o k8sObject
			if err := n.Decode(&o); err != nil {
				t.Fatalf("%s: document %d: %v", f, i, err)
			}
			out = append(out, o)
		}
	}
	return out
}

// TestClusterManifests holds deploy/cluster/kubernetes together: every
// document parses as YAML into a Kubernetes object of a known kind with a
// name; every Service selects the pods of a StatefulSet and its ports are
// theirs; every StatefulSet's selector matches its pods, and what its
// containers mount and read (ConfigMaps, volumes) exists; and the
// Swapgate nodes' command line and environment pass serve's own settings
// checks, with their --cluster-etcd naming the etcd members the manifests
// run.
func TestClusterManifests(t *testing.T) {
	objs := loadManifests(t, clusterManifests)
	byKind := map[string]map[string]*k8sObject{}
	for i := range objs {
		o := &objs[i]
		want := map[string]string{"Service": "v1", "ConfigMap": "v1", "StatefulSet": "apps/v1"}[o.Kind]
		if want == "" || o.APIVersion != want || o.Metadata.Name == "" {
			t.Fatalf("object %d: kind %q, apiVersion %q, name %q: want a named Service, ConfigMap (v1) or StatefulSet (apps/v1)", i, o.Kind, o.APIVersion, o.Metadata.Name)
		}
		if byKind[o.Kind] == nil {
			byKind[o.Kind] = map[string]*k8sObject{}
		}
		if byKind[o.Kind][o.Metadata.Name] != nil {
			t.Fatalf("two %s named %s", o.Kind, o.Metadata.Name)
		}
		byKind[o.Kind][o.Metadata.Name] = o
	}
	sets := byKind["StatefulSet"]
	for _, name := range []string{"swapgate", "etcd", "postgres-primary", "postgres-standby"} {
		if sets[name] == nil {
			t.Fatalf("no StatefulSet %s: the layout is Swapgate nodes, etcd, a PostgreSQL primary and its standby", name)
		}
	}
	podPorts := func(s *k8sObject) map[string]int {
		m := map[string]int{}
		for _, c := range s.Spec.Template.Spec.Containers {
			for _, p := range c.Ports {
				m[p.Name] = p.ContainerPort
			}
		}
		return m
	}
	matches := func(sel, labels map[string]string) bool {
		for k, v := range sel {
			if labels[k] != v {
				return false
			}
		}
		return len(sel) > 0
	}
	for _, s := range slices.Sorted(maps.Keys(sets)) {
		set := sets[s]
		labels := set.Spec.Template.Metadata.Labels
		if !matches(set.selector(t), labels) {
			t.Errorf("StatefulSet %s: selector %v does not match its pods' labels %v", s, set.selector(t), labels)
		}
		if byKind["Service"][set.Spec.ServiceName] == nil {
			t.Errorf("StatefulSet %s: serviceName %q is no Service", s, set.Spec.ServiceName)
		}
		if set.Spec.Replicas < 1 {
			t.Errorf("StatefulSet %s: %d replicas", s, set.Spec.Replicas)
		}
		volumes := map[string]bool{}
		for _, v := range set.Spec.Template.Spec.Volumes {
			volumes[v.Name] = true
			if v.ConfigMap != nil && byKind["ConfigMap"][v.ConfigMap.Name] == nil {
				t.Errorf("StatefulSet %s: volume %s names ConfigMap %s, which no manifest defines", s, v.Name, v.ConfigMap.Name)
			}
		}
		for _, c := range set.Spec.VolumeClaimTemplates {
			volumes[c.Metadata.Name] = true
		}
		for _, c := range append(slices.Clone(set.Spec.Template.Spec.InitContainers), set.Spec.Template.Spec.Containers...) {
			if c.Image == "" {
				t.Errorf("StatefulSet %s: container %s has no image", s, c.Name)
			}
			for _, m := range c.VolumeMounts {
				if !volumes[m.Name] {
					t.Errorf("StatefulSet %s: container %s mounts %s, which is no volume of the pod", s, c.Name, m.Name)
				}
			}
			for _, e := range c.EnvFrom {
				if e.ConfigMapRef != nil && byKind["ConfigMap"][e.ConfigMapRef.Name] == nil {
					t.Errorf("StatefulSet %s: container %s reads ConfigMap %s, which no manifest defines", s, c.Name, e.ConfigMapRef.Name)
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byKind["Service"])) {
		svc := byKind["Service"][name]
		sel := svc.selector(t)
		var reached []*k8sObject
		for _, s := range sets {
			if matches(sel, s.Spec.Template.Metadata.Labels) {
				reached = append(reached, s)
			}
		}
		if len(reached) != 1 {
			t.Errorf("Service %s: selector %v reaches %d StatefulSets' pods, want 1", name, sel, len(reached))
			continue
		}
		ports := podPorts(reached[0])
		for _, p := range svc.Spec.Ports {
			target := p.TargetPort
			if target == "" {
				target = strconv.Itoa(p.Port)
			}
			if _, named := ports[target]; !named && !slices.Contains(slices.Collect(maps.Values(ports)), p.Port) {
				t.Errorf("Service %s: port %s (%d → %s) is no port of %s's pods %v", name, p.Name, p.Port, target, reached[0].Metadata.Name, ports)
			}
		}
	}
	var lb bool
	for _, svc := range byKind["Service"] {
		lb = lb || (svc.Spec.Type == "LoadBalancer" && matches(svc.selector(t), sets["swapgate"].Spec.Template.Metadata.Labels))
	}
	if !lb {
		t.Error("no LoadBalancer Service in front of the Swapgate nodes")
	}

	// The nodes' command line and environment, as serve reads them.
	node := sets["swapgate"].Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, ref := range node.EnvFrom {
		maps.Copy(env, byKind["ConfigMap"][ref.ConfigMapRef.Name].Data)
	}
	for _, e := range node.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP":
			env[e.Name] = "10.1.2.3"
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.Name == "SWAPGATE_STORE":
			env[e.Name] = "postgres://swapgate:secret@postgres-primary:5432/swapgate"
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		default:
			t.Fatalf("the Swapgate container's %s comes from somewhere the test does not know", e.Name)
		}
	}
	if len(node.Args) == 0 || node.Args[0] != "serve" {
		t.Fatalf("the Swapgate container's args %v do not run serve", node.Args)
	}
	// Kubernetes expands $(NAME) in args from the container's environment.
	var args []string
	for _, a := range node.Args[1:] {
		args = append(args, regexp.MustCompile(`\$\(([A-Z_]+)\)`).ReplaceAllStringFunc(a, func(m string) string {
			v, ok := env[m[2:len(m)-1]]
			if !ok {
				t.Fatalf("arg %q: %s is not in the container's environment", a, m)
			}
			return v
		}))
	}
	cfg, _, err := loadServeConfig(args, func(k string) string { return env[k] }, io.Discard)
	if err == nil {
		err = validateServeConfig(&cfg)
	}
	if err != nil {
		t.Fatalf("serve refuses the nodes' settings %v (environment %v): %v", args, slices.Sorted(maps.Keys(env)), err)
	}
	if !cfg.Cluster.On() || cfg.Cluster.Etcd == "" || cfg.Cluster.Peers != "" {
		t.Fatalf("the nodes' cluster settings %+v: want a cluster on the etcd provider", cfg.Cluster)
	}
	etcd := sets["etcd"]
	var members []string
	for i := range etcd.Spec.Replicas {
		members = append(members, "http://etcd-"+strconv.Itoa(i)+"."+etcd.Spec.ServiceName+":2379")
	}
	if got := strings.Split(cfg.Cluster.Etcd, ","); !slices.Equal(got, members) {
		t.Errorf("--cluster-etcd %v, want the etcd members %v", got, members)
	}
	if _, port, _ := strings.Cut(cfg.Cluster.Bind, ":"); !slices.Contains(slices.Collect(maps.Values(podPorts(sets["swapgate"]))), mustAtoi(t, port)) {
		t.Errorf("--cluster-bind %s: its port is no container port", cfg.Cluster.Bind)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// TestClusterNginxConfig holds the one-machine round-robin proxy to the
// README's three-node walkthrough: its upstream servers are the nodes'
// --addr, in order.
func TestClusterNginxConfig(t *testing.T) {
	b, err := os.ReadFile("../../deploy/cluster/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)upstream swapgate \{(.*?)\}`).FindSubmatch(b)
	if block == nil {
		t.Fatal("nginx.conf has no upstream swapgate block")
	}
	var upstream []string
	for _, m := range regexp.MustCompile(`(?m)^\s*server\s+([^\s;]+)`).FindAllSubmatch(block[1], -1) {
		upstream = append(upstream, string(m[1]))
	}
	var nodes []string
	for _, marker := range readmeClusterNodes {
		line := readmeBlockAfter(t, marker)
		m := regexp.MustCompile(`--addr (\S+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("the README's node after %q has no --addr: %q", marker, line)
		}
		nodes = append(nodes, m[1])
	}
	if !slices.Equal(upstream, nodes) {
		t.Fatalf("nginx.conf's upstream servers %v, the README's nodes %v", upstream, nodes)
	}
	if strings.Count(string(b), "{") != strings.Count(string(b), "}") {
		t.Fatal("nginx.conf's braces do not balance")
	}
}
