// Package argocd runs Hyperspool's Argo CD health checks in Argo CD's own Lua VM, from test cases
// in the layout of Argo CD's repository (resource_customizations/<group>/<kind>/health.lua beside
// health_test.yaml and testdata/), so the scripts and their tests can be contributed upstream as
// they are.
package argocd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	argolua "github.com/argoproj/argo-cd/v3/util/lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// customizations is config/argocd's copy of the upstream layout.
const customizations = "../../config/argocd/resource_customizations"

// healthTests is health_test.yaml, as Argo CD's own test reads it.
type healthTests struct {
	Tests []struct {
		InputPath    string              `json:"inputPath"`
		HealthStatus health.HealthStatus `json:"healthStatus"`
	} `json:"tests"`
}

// wanted is each kind and the health states its tests must show: a health check that never
// answers Suspended for a run waiting on a person is as wrong as one that answers it wrongly.
var wanted = map[string][]health.HealthStatusCode{
	"hyperspool.dev/Run":      {health.HealthStatusHealthy, health.HealthStatusProgressing, health.HealthStatusDegraded, health.HealthStatusSuspended},
	"hyperspool.dev/Workflow": {health.HealthStatusHealthy, health.HealthStatusProgressing, health.HealthStatusDegraded},
	"hyperspool.dev/Handler":  {health.HealthStatusHealthy, health.HealthStatusProgressing, health.HealthStatusDegraded},
	"hyperspool.dev/Schedule": {health.HealthStatusHealthy, health.HealthStatusProgressing, health.HealthStatusDegraded, health.HealthStatusSuspended},
}

func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	object := map[string]any{}
	if err := yaml.Unmarshal(data, &object); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &unstructured.Unstructured{Object: object}
}

// TestHealthChecks runs every health_test.yaml case the way Argo CD runs a health customization
// from argocd-cm: the script is a ResourceOverride under the object's group/kind (what
// resource.customizations.health.hyperspool.dev_Run becomes), found by GetHealthScript, with the
// standard libraries open (config/argocd sets useOpenLibs, as Argo CD does for its built-in
// scripts), and run by ExecuteHealthLua, which also refuses a status Argo CD does not know.
func TestHealthChecks(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join(customizations, "*", "*", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, script := range scripts {
		dir := filepath.Dir(script)
		key := filepath.ToSlash(strings.TrimPrefix(dir, customizations+string(filepath.Separator)))
		seen[key] = true
		lua, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "health_test.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var cases healthTests
		if err := yaml.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s/health_test.yaml: %v", key, err)
		}
		vm := argolua.VM{ResourceOverrides: map[string]v1alpha1.ResourceOverride{key: {HealthLua: string(lua), UseOpenLibs: true}}}
		shown := map[health.HealthStatusCode]bool{}
		for _, c := range cases.Tests {
			t.Run(key+"/"+c.InputPath, func(t *testing.T) {
				object := readObject(t, filepath.Join(dir, c.InputPath))
				if got := argolua.GetConfigMapKey(object.GroupVersionKind()); got != key {
					t.Fatalf("%s is a %s, not a %s: it is in the wrong directory", c.InputPath, got, key)
				}
				found, openLibs, err := vm.GetHealthScript(object)
				if err != nil || found != string(lua) {
					t.Fatalf("Argo CD did not find the health check of %s (error %v)", key, err)
				}
				result, err := argolua.VM{UseOpenLibs: openLibs}.ExecuteHealthLua(object, found)
				if err != nil {
					t.Fatalf("the health check failed in Argo CD's Lua VM: %v", err)
				}
				if *result != c.HealthStatus {
					t.Errorf("health: got %+v, want %+v", *result, c.HealthStatus)
				}
				shown[result.Status] = true
			})
		}
		for _, status := range wanted[key] {
			if !shown[status] {
				t.Errorf("%s: no test case shows %s", key, status)
			}
		}
	}
	for key := range wanted {
		if !seen[key] {
			t.Errorf("no health check for %s under %s", key, customizations)
		}
	}
	if len(seen) != len(wanted) {
		keys := make([]string, 0, len(seen))
		for key := range seen {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		t.Errorf("health checks %v, want one for each of the four kinds", keys)
	}
}
