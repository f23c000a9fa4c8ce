package examples

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// airflowVerdictScript runs databrew_dag.py under the stub, then calls its
// fail_with_verdict, and its two *_failed tasks' functions, with a stand-in
// task instance whose XCom is a failed run's verdict (as the pod's sidecar
// pushes it, as BashOperator's text), nothing, or nothing with a
// .last_run.json to read: argv[3] is the verdict file, argv[4] the
// .last_run.json. Each call's exception and what it pushed go into
// out["calls"].
const airflowVerdictScript = airflowStubHead + `
class TI:
    def __init__(self, value):
        self.value, self.pushed = value, {}
    def xcom_pull(self, task_ids):
        self.pulled = task_ids
        return self.value
    def xcom_push(self, key, value):
        self.pushed[key] = value

def call(fn, value, *args, **kw):
    ti = TI(value)
    try:
        fn(ti, *args, **kw)
        raised = None
    except Exception as e:
        raised = type(e).__name__ + ": " + str(e)
    return {"raised": raised, "pushed": ti.pushed, "pulled": getattr(ti, "pulled", None)}

with open(sys.argv[3]) as f:
    failed = json.load(f)
fail = g["fail_with_verdict"]
fns = {t.task_id(): t.fn for t in tasks if t.fn}
out["calls"] = {
    "xcom": call(fail, failed, "crawl"),
    "xcom_text": call(fail, json.dumps(failed), "crawl"),
    "last_run": call(fail, None, "crawl", last_run=sys.argv[4]),
    "nothing": call(fail, None, "crawl", last_run=sys.argv[4] + ".missing"),
    "bash_task": call(lambda ti: fns["crawl_books_failed"](ti=ti), failed),
    "pod_task": call(lambda ti: fns["crawl_books_pod_failed"](ti=ti), None),
}
print(json.dumps(out, default=str))
`

// isExit reports whether err is a process's exit with code.
func isExit(err error, code int) bool {
	ee, ok := err.(*exec.ExitError)
	return ok && ee.ExitCode() == code
}

// The Airflow DAG imports under Airflow 3 and 2.10, runs the config with
// BashOperator and with KubernetesPodOperator (the verdict as XCom both
// ways), and gives each a task that runs only when the crawl failed and
// fails with the failed run's verdict: read from the crawl's XCom, or
// from .last_run.json when the crawl pushed none, checked here on the
// verdict files of a real failed run.
func TestAirflowDAG(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on this machine")
	}
	dir := t.TempDir()
	bin := buildStage(t)
	site, config := booksSite(t, dir)
	site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, PathPrefix: "/catalogue/page-1.html", Status: 500})
	xcom := filepath.Join(dir, "xcom", "return.json")
	cmd := exec.Command(bin, "run", "--xcom-file", xcom, config)
	if out, err := cmd.CombinedOutput(); !isExit(err, 1) {
		t.Fatalf("a failed run: %v, want exit 1\n%s", err, out)
	}
	var failed struct {
		Config, Outcome, Stop, Detail string
	}
	b, err := os.ReadFile(xcom)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &failed); err != nil || failed.Outcome != "failed" || failed.Detail == "" {
		t.Fatalf("the failed run's XCom file: %v\n%s", err, b)
	}
	lastRun := filepath.Join(dir, "state", ".last_run.json")
	line := "books: failed (" + failed.Stop + "): " + failed.Detail

	path := filepath.Join("airflow", "databrew_dag.py")
	for _, layout := range airflowLayouts {
		t.Run("airflow"+layout, func(t *testing.T) {
			var dag struct {
				Tasks []struct {
					Kind   string
					TaskID string `json:"task_id"`
					KW     map[string]any
				}
				Edges [][2]string
				Calls map[string]struct {
					Raised string
					Pushed map[string]any
					Pulled string
				}
			}
			runAirflowStub(t, airflowVerdictScript, path, layout, &dag, xcom, lastRun)
			kinds := map[string]string{}
			kw := map[string]map[string]any{}
			for _, task := range dag.Tasks {
				kinds[task.TaskID], kw[task.TaskID] = task.Kind, task.KW
			}
			want := map[string]string{"crawl_books": "bash", "crawl_books_failed": "python",
				"crawl_books_pod": "kpo", "crawl_books_pod_failed": "python"}
			for id, kind := range want {
				if kinds[id] != kind {
					t.Errorf("task %s is %q, want %s; tasks %v", id, kinds[id], kind, kinds)
				}
			}
			if len(kinds) != len(want) {
				t.Errorf("tasks %v, want %v", kinds, want)
			}
			bash, _ := kw["crawl_books"]["bash_command"].(string)
			for _, arg := range []string{"--json", "--exit-unproductive 99", "--partition-date {{ ds }}"} {
				if !strings.Contains(bash, arg) {
					t.Errorf("crawl_books runs %q, without %s", bash, arg)
				}
			}
			if kw["crawl_books"]["skip_on_exit_code"] != float64(99) || kw["crawl_books"]["do_xcom_push"] != true {
				t.Errorf("crawl_books: skip_on_exit_code %v, do_xcom_push %v", kw["crawl_books"]["skip_on_exit_code"], kw["crawl_books"]["do_xcom_push"])
			}
			var args []string
			for _, a := range kw["crawl_books_pod"]["arguments"].([]any) {
				args = append(args, a.(string))
			}
			if i := slices.Index(args, "--xcom-file"); i < 0 || i+1 == len(args) || args[i+1] != "/airflow/xcom/return.json" ||
				kw["crawl_books_pod"]["do_xcom_push"] != true {
				t.Errorf("crawl_books_pod: arguments %q, do_xcom_push %v; want --xcom-file /airflow/xcom/return.json and do_xcom_push", args, kw["crawl_books_pod"]["do_xcom_push"])
			}
			for _, id := range []string{"crawl_books_failed", "crawl_books_pod_failed"} {
				if kw[id]["trigger_rule"] != "one_failed" {
					t.Errorf("%s: trigger_rule %v, want one_failed", id, kw[id]["trigger_rule"])
				}
			}
			for _, e := range [][2]string{{"crawl_books", "crawl_books_failed"}, {"crawl_books_pod", "crawl_books_pod_failed"}} {
				if !slices.Contains(dag.Edges, e) {
					t.Errorf("no edge %s >> %s in %v", e[0], e[1], dag.Edges)
				}
			}

			calls := dag.Calls
			for name, from := range map[string]string{
				"xcom":      "from the XCom of crawl: ",
				"xcom_text": "from the XCom of crawl: ",
				"last_run":  "from " + lastRun + " (the last run that started, at ",
				"bash_task": "from the XCom of crawl_books: ",
			} {
				c := calls[name]
				if !strings.HasPrefix(c.Raised, "RuntimeError: ") || !strings.Contains(c.Raised, from) || !strings.HasSuffix(c.Raised, line) {
					t.Errorf("%s: raised %q, want the verdict %q, %s", name, c.Raised, line, from)
				}
				if v, _ := c.Pushed["verdict"].(map[string]any); v["outcome"] != "failed" || v["detail"] != failed.Detail {
					t.Errorf("%s: pushed %v, want the verdict as XCom \"verdict\"", name, c.Pushed)
				}
			}
			if c := calls["nothing"]; !strings.Contains(c.Raised, "crawl failed and left no verdict: it exited 2") || len(c.Pushed) != 0 {
				t.Errorf("no verdict: raised %q, pushed %v", c.Raised, c.Pushed)
			}
			if c := calls["pod_task"]; c.Pulled != "crawl_books_pod" || !strings.Contains(c.Raised, "provider is older than 10.6.0") {
				t.Errorf("the pod's failed task without XCom: pulled %q, raised %q", c.Pulled, c.Raised)
			}
		})
	}
}
