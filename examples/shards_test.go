package examples

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// runIDPattern is what --run-id accepts.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// dig walks a decoded YAML or JSON value along map keys (string) and list
// indexes (int); it returns nil where the path does not exist.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[p]
		case int:
			l, ok := v.([]any)
			if !ok || p >= len(l) {
				return nil
			}
			v = l[p]
		}
	}
	return v
}

// flagValue returns the value after the flag in args, and whether the flag
// occurs exactly once.
func flagValue(args []string, flag string) (string, bool) {
	val, n := "", 0
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			val, n = args[i+1], n+1
		}
	}
	return val, n == 1
}

// shardJob is what the checks read of one Job of shards-indexed-job.yaml.
type shardJob struct {
	name      string
	spec      map[string]any
	pod       map[string]any
	container map[string]any
	args      []string
	env       map[string]string // literal env values by name
}

func newShardJob(t *testing.T, doc map[string]any) shardJob {
	t.Helper()
	j := shardJob{name: dig(doc, "metadata", "name").(string), env: map[string]string{}}
	j.spec, _ = doc["spec"].(map[string]any)
	j.pod, _ = dig(j.spec, "template", "spec").(map[string]any)
	containers, _ := dig(j.pod, "containers").([]any)
	if len(containers) != 1 {
		t.Fatalf("job %s: %d containers, want 1", j.name, len(containers))
	}
	j.container = containers[0].(map[string]any)
	args, _ := j.container["args"].([]any)
	for _, a := range args {
		j.args = append(j.args, a.(string))
	}
	if len(j.args) < 2 {
		t.Fatalf("job %s: args %q, want a command and a config", j.name, j.args)
	}
	env, _ := j.container["env"].([]any)
	for _, e := range env {
		if v, ok := dig(e, "value").(string); ok {
			j.env[dig(e, "name").(string)] = v
		}
	}
	return j
}

// runID returns the Job's --run-id argument, which must be a $(VAR)
// reference to a literal env value that is a valid run id.
func (j shardJob) runID(t *testing.T) (ref, value string) {
	t.Helper()
	ref, ok := flagValue(j.args, "--run-id")
	if !ok {
		t.Fatalf("job %s: args %q do not hold --run-id once", j.name, j.args)
	}
	m := regexp.MustCompile(`^\$\(([A-Za-z_][A-Za-z0-9_]*)\)$`).FindStringSubmatch(ref)
	if m == nil {
		t.Fatalf("job %s: --run-id %q is not a $(VAR) reference", j.name, ref)
	}
	value, ok = j.env[m[1]]
	if !ok {
		t.Fatalf("job %s: --run-id refers to %s, which its container's env does not set to a value", j.name, m[1])
	}
	if !runIDPattern.MatchString(value) {
		t.Fatalf("job %s: %s = %q is not a valid run id", j.name, m[1], value)
	}
	return ref, value
}

// shards returns the Job's --shards argument.
func (j shardJob) shards(t *testing.T) int {
	t.Helper()
	s, ok := flagValue(j.args, "--shards")
	if !ok {
		t.Fatalf("job %s: args %q do not hold --shards once", j.name, j.args)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("job %s: --shards %q is not a positive count", j.name, s)
	}
	return n
}

// mounts returns the container's mount paths by volume name, and the pod's
// volumes by name.
func (j shardJob) mounts() (paths map[string]string, volumes map[string]map[string]any) {
	paths, volumes = map[string]string{}, map[string]map[string]any{}
	vm, _ := j.container["volumeMounts"].([]any)
	for _, m := range vm {
		paths[dig(m, "name").(string)] = dig(m, "mountPath").(string)
	}
	vs, _ := j.pod["volumes"].([]any)
	for _, v := range vs {
		volumes[dig(v, "name").(string)] = v.(map[string]any)
	}
	return paths, volumes
}

// The shards example: an Indexed Job whose completions and parallelism
// equal the N of its `run --shards N`, and a commit Job with the same N and
// the same run id, both reading one config whose storage is on the state
// volume and the S3 credentials from the secret.
func TestKubernetesShardJobs(t *testing.T) {
	var indexed, commit *shardJob
	configMaps := map[string]map[string]any{}
	claims := map[string]bool{}
	for _, doc := range readManifests(t, "shards-indexed-job.yaml") {
		switch doc["kind"] {
		case "ConfigMap":
			configMaps[dig(doc, "metadata", "name").(string)] = doc
		case "PersistentVolumeClaim":
			claims[dig(doc, "metadata", "name").(string)] = true
		case "Job":
			j := newShardJob(t, doc)
			switch j.args[0] {
			case "run":
				if indexed != nil {
					t.Fatalf("two run Jobs: %s and %s", indexed.name, j.name)
				}
				indexed = &j
			case "commit":
				if commit != nil {
					t.Fatalf("two commit Jobs: %s and %s", commit.name, j.name)
				}
				commit = &j
			default:
				t.Fatalf("job %s runs %q, neither run nor commit", j.name, j.args)
			}
		default:
			t.Fatalf("unexpected kind %v", doc["kind"])
		}
	}
	if indexed == nil || commit == nil {
		t.Fatal("want a run Job (the shards) and a commit Job")
	}

	n := indexed.shards(t)
	if got := indexed.spec["completionMode"]; got != "Indexed" {
		t.Errorf("job %s: completionMode = %v, want Indexed", indexed.name, got)
	}
	if c, p := indexed.spec["completions"], indexed.spec["parallelism"]; c != n || p != n {
		t.Errorf("job %s: completions = %v, parallelism = %v, want both %d as in --shards %d", indexed.name, c, p, n, n)
	}
	if b, ok := indexed.spec["backoffLimitPerIndex"].(int); !ok || b < 1 {
		t.Errorf("job %s: backoffLimitPerIndex = %v, want a retry count per shard", indexed.name, indexed.spec["backoffLimitPerIndex"])
	}
	if _, ok := flagValue(indexed.args, "--shard"); ok {
		t.Errorf("job %s: args %q hold --shard: the index comes from JOB_COMPLETION_INDEX", indexed.name, indexed.args)
	}
	if _, set := indexed.env["JOB_COMPLETION_INDEX"]; set {
		t.Errorf("job %s sets JOB_COMPLETION_INDEX itself: Kubernetes sets it in each pod", indexed.name)
	}
	if got := commit.shards(t); got != n {
		t.Errorf("commit job %s: --shards %d, the shards run with --shards %d", commit.name, got, n)
	}
	shardRef, shardID := indexed.runID(t)
	commitRef, commitID := commit.runID(t)
	if shardRef != commitRef || shardID != commitID {
		t.Errorf("run id: the shards pass %s = %q, the commit %s = %q; want the same", shardRef, shardID, commitRef, commitID)
	}
	if _, ok := commit.spec["completionMode"]; ok {
		t.Errorf("commit job %s has a completionMode: it is one pod", commit.name)
	}

	for _, j := range []*shardJob{indexed, commit} {
		if got := j.pod["restartPolicy"]; got != "Never" {
			t.Errorf("job %s: restartPolicy = %v, want Never", j.name, got)
		}
		if got := dig(j.container, "envFrom", 0, "secretRef", "name"); got != "databrew-s3" {
			t.Errorf("job %s: envFrom secret = %v, want databrew-s3", j.name, got)
		}
		// The config argument is a file in a mounted ConfigMap whose
		// storage lies on the mounted state claim.
		config := j.args[1]
		paths, volumes := j.mounts()
		var storageMount, toml string
		for vol, mp := range paths {
			if claim, ok := dig(volumes[vol], "persistentVolumeClaim", "claimName").(string); ok {
				if !claims[claim] {
					t.Errorf("job %s mounts claim %s, which the file does not define", j.name, claim)
				}
				storageMount = mp
			}
			if cm, ok := dig(volumes[vol], "configMap", "name").(string); ok && filepath.Dir(config) == filepath.Clean(mp) {
				toml, _ = dig(configMaps[cm], "data", filepath.Base(config)).(string)
			}
		}
		if toml == "" {
			t.Errorf("job %s: config %s is not a key of a mounted ConfigMap", j.name, config)
			continue
		}
		m := regexp.MustCompile(`(?m)^storage = "([^"]+)"`).FindStringSubmatch(toml)
		if m == nil || storageMount == "" || !strings.HasPrefix(m[1], storageMount+"/") {
			t.Errorf("job %s: the config's storage is not under the state volume's mount %q:\n%s", j.name, storageMount, toml)
		}
	}
	if indexed.args[1] != commit.args[1] {
		t.Errorf("the shards run %s, the commit %s: want one config", indexed.args[1], commit.args[1])
	}
}

// airflowStubHead stands in for Airflow, its Kubernetes provider,
// kubernetes and pendulum, and runs a DAG file:
//
//	python3 -c STUB DAG.py LAYOUT [ARG...]
//
// LAYOUT 3 offers Airflow 3's import paths alone (airflow.sdk, the
// standard provider's BashOperator), LAYOUT 2 Airflow 2.10's alone
// (airflow.DAG, airflow.decorators, airflow.operators.bash), so a DAG
// imports under each only if it imports what that version has. It leaves
// what the DAG built in out: the module's constants, the tasks (a mapped
// task with its partial and expand arguments, a @task with its function)
// and the edges; g holds the DAG module's globals.
const airflowStubHead = `
import json, runpy, sys, types

tasks, edges = [], []

class Task:
    def __init__(self, kind, kw, fn=None):
        self.kind, self.kw, self.fn = kind, kw, fn
        tasks.append(self)
    def task_id(self):
        return self.kw.get("task_id") or self.kw.get("partial", {}).get("task_id")
    def __rshift__(self, other):
        for o in other if isinstance(other, (list, tuple)) else [other]:
            edges.append([self.task_id(), o.task_id()])
        return other
    def __rrshift__(self, other):
        for o in other:
            edges.append([o.task_id(), self.task_id()])
        return self

class Partial:
    def __init__(self, kw):
        self.kw = kw
    def expand(self, **kw):
        return Task("mapped", {"partial": self.kw, "expand": kw})

class BashOperator:
    def __new__(cls, **kw):
        return Task("bash", kw)
    @classmethod
    def partial(cls, **kw):
        return Partial(kw)

class KubernetesPodOperator:
    def __new__(cls, **kw):
        return Task("kpo", kw)

def task(*args, **kw):
    def wrap(fn):
        return lambda *a, **k: Task("python", {"task_id": kw.get("task_id", fn.__name__), **kw}, fn)
    return wrap(args[0]) if args and callable(args[0]) else wrap

class DAG:
    def __init__(self, **kw):
        self.kw = kw
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False

def module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m

k8s = module("kubernetes.client.models")
k8s.__getattr__ = lambda name: (lambda *a, **kw: {"kind": name, **kw})
module("kubernetes", client=module("kubernetes.client", models=k8s))
module("pendulum", datetime=lambda *a, **kw: [a, kw])
module("airflow.providers.cncf.kubernetes.operators.pod", KubernetesPodOperator=KubernetesPodOperator)
if sys.argv[2] == "3":
    module("airflow")
    module("airflow.sdk", DAG=DAG, task=task)
    module("airflow.providers.standard.operators.bash", BashOperator=BashOperator)
elif sys.argv[2] == "2":
    module("airflow", DAG=DAG)
    module("airflow.decorators", task=task)
    module("airflow.operators")
    module("airflow.operators.bash", BashOperator=BashOperator)
else:
    sys.exit("layout must be 2 or 3")

g = runpy.run_path(sys.argv[1])
out = {
    "constants": {k: v for k, v in g.items() if k.isupper() and isinstance(v, (int, str))},
    "tasks": [{"kind": t.kind, "task_id": t.task_id(), "kw": t.kw} for t in tasks],
    "edges": edges,
}
`

// airflowStub runs a DAG file under airflowStubHead and prints out as
// JSON.
const airflowStub = airflowStubHead + `
print(json.dumps(out, default=str))
`

// airflowLayouts are the Airflow versions whose import paths the stub
// offers.
var airflowLayouts = []string{"3", "2"}

// runAirflowStub runs script (airflowStubHead and more) on the DAG file
// path under an Airflow layout and decodes the JSON it prints into v.
func runAirflowStub(t *testing.T, script, path, layout string, v any, args ...string) {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on this machine")
	}
	out, err := exec.Command(python, append([]string{"-c", script, path, layout}, args...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("running %s with Airflow %s stubbed: %v\n%s", path, layout, err, stderr)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// runIDArg and the other flag patterns read a bash_command, where a value
// may be a Jinja expression with spaces.
var (
	runIDArg    = regexp.MustCompile(`--run-id\s+(\{\{.*?\}\}|\S+)`)
	shardArg    = regexp.MustCompile(`--shard\s+(\S+)`)
	shardsArg   = regexp.MustCompile(`--shards\s+(\S+)`)
	partDateArg = regexp.MustCompile(`--partition-date\s+(\{\{.*?\}\}|\S+)`)
	commandHead = regexp.MustCompile(`^databrew-stage\s+(run|commit)\s+(/\S+\.toml)\b`)
)

// The Airflow shards DAG maps one task over the shard indexes 0..SHARDS-1,
// each `run CONFIG --shard i/SHARDS` with one run id and retries, and
// commits downstream with `--shards SHARDS` and the same run id and config.
func TestAirflowShardDAG(t *testing.T) {
	path := filepath.Join("airflow", "shards_dag.py")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	if !strings.Contains(text, ".expand(") {
		t.Fatal("shards_dag.py does not map the shard task with .expand(")
	}
	if c := regexp.MustCompile(`(?m)^SHARDS = \d+`).FindAllString(text, -1); len(c) != 1 {
		t.Fatalf("shards_dag.py: %d assignments of the SHARDS constant, want 1", len(c))
	}
	if regexp.MustCompile(`--shards?[ =]+\d`).MatchString(text) {
		t.Error("shards_dag.py writes a shard count as a literal instead of SHARDS")
	}

	for _, layout := range airflowLayouts {
		t.Run("airflow"+layout, func(t *testing.T) { checkShardDAG(t, path, layout) })
	}
}

// checkShardDAG checks the shards DAG as the stub for an Airflow layout
// builds it.
func checkShardDAG(t *testing.T, path, layout string) {
	var dag struct {
		Constants map[string]any
		Tasks     []struct {
			Kind   string
			TaskID string `json:"task_id"`
			KW     map[string]any
		}
		Edges [][2]string
	}
	runAirflowStub(t, airflowStub, path, layout, &dag)
	shards, ok := dag.Constants["SHARDS"].(float64)
	if !ok || shards < 1 || shards != float64(int(shards)) {
		t.Fatalf("SHARDS = %v, want a positive integer", dag.Constants["SHARDS"])
	}
	n := int(shards)

	var mapped, commit []string
	var mappedID, commitID string
	var mappedKW, commitKW map[string]any
	for _, task := range dag.Tasks {
		switch task.Kind {
		case "mapped":
			cmds, ok := dig(task.KW, "expand", "bash_command").([]any)
			if !ok || mapped != nil {
				t.Fatalf("want one task mapped over bash_command, got %v", task.KW)
			}
			for _, c := range cmds {
				mapped = append(mapped, c.(string))
			}
			mappedID, mappedKW = task.TaskID, task.KW["partial"].(map[string]any)
		case "bash":
			c, _ := task.KW["bash_command"].(string)
			if m := commandHead.FindStringSubmatch(c); m != nil && m[1] == "commit" {
				commit = append(commit, c)
				commitID, commitKW = task.TaskID, task.KW
			}
		}
	}
	if len(commit) != 1 {
		t.Fatalf("want one commit task, got %q", commit)
	}
	if len(mapped) != n {
		t.Fatalf("the shard task is mapped over %d commands, SHARDS = %d", len(mapped), n)
	}
	if r, ok := mappedKW["retries"].(float64); !ok || r < 1 {
		t.Errorf("the shard task's retries = %v, want at least 1", mappedKW["retries"])
	}
	if tr, ok := commitKW["trigger_rule"]; ok && tr != "all_success" {
		t.Errorf("the commit's trigger_rule = %v, want all_success", tr)
	}
	edge := false
	for _, e := range dag.Edges {
		edge = edge || e == [2]string{mappedID, commitID}
	}
	if !edge {
		t.Errorf("no edge %s >> %s in %v", mappedID, commitID, dag.Edges)
	}

	head := commandHead.FindStringSubmatch(commit[0])
	config := head[2]
	runID := runIDArg.FindStringSubmatch(commit[0])
	if runID == nil {
		t.Fatalf("the commit %q has no --run-id", commit[0])
	}
	if strings.Contains(runID[1], "run_id") && !strings.Contains(runID[1], "replace") {
		t.Errorf("--run-id %s: Airflow's run_id holds ':' and '+', which a run id does not allow", runID[1])
	}
	if m := shardsArg.FindStringSubmatch(commit[0]); m == nil || m[1] != strconv.Itoa(n) {
		t.Errorf("the commit %q does not pass --shards %d", commit[0], n)
	}
	if !strings.Contains(commit[0], "--json") && !strings.Contains(commit[0], "--xcom-file") {
		t.Errorf("the commit %q writes no verdict for XCom (--json or --xcom-file)", commit[0])
	}
	var partDate string
	for i, c := range mapped {
		m := commandHead.FindStringSubmatch(c)
		if m == nil || m[1] != "run" || m[2] != config {
			t.Errorf("shard %d runs %q, want databrew-stage run %s", i, c, config)
		}
		if m := shardArg.FindStringSubmatch(c); m == nil || m[1] != strconv.Itoa(i)+"/"+strconv.Itoa(n) {
			t.Errorf("shard %d: %q does not pass --shard %d/%d", i, c, i, n)
		}
		if m := runIDArg.FindStringSubmatch(c); m == nil || m[1] != runID[1] {
			t.Errorf("shard %d: %q does not pass --run-id %s as the commit does", i, c, runID[1])
		}
		m = partDateArg.FindStringSubmatch(c)
		if m == nil || (i > 0 && m[1] != partDate) {
			t.Errorf("shard %d: %q does not pass the --partition-date the others pass", i, c)
		} else {
			partDate = m[1]
		}
	}
}
