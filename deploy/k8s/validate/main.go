// Strictly decodes every object in the given Kubernetes YAML files into the typed API
// structs of k8s.io/api (the schema the API server validates against): an unknown or
// misspelled field, a wrong type or an unknown kind is an error. Used by
// scripts/deploy-check.sh; no cluster or schema download needed.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

func main() {
	failed := false
	count := 0
	for _, file := range os.Args[1:] {
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", file, err)
				os.Exit(2)
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", file, err)
				failed = true
				continue
			}
			var obj interface{}
			switch meta.APIVersion + "/" + meta.Kind {
			case "v1/Service":
				obj = &corev1.Service{}
			case "v1/ConfigMap":
				obj = &corev1.ConfigMap{}
			case "apps/v1/StatefulSet":
				obj = &appsv1.StatefulSet{}
			case "apps/v1/Deployment":
				obj = &appsv1.Deployment{}
			default:
				fmt.Fprintf(os.Stderr, "%s: unknown kind %s %s\n", file, meta.APIVersion, meta.Kind)
				failed = true
				continue
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %s: %v\n", file, meta.Kind, err)
				failed = true
				continue
			}
			count++
		}
	}
	if failed {
		os.Exit(1)
	}
	fmt.Printf("k8s: %d objects decode strictly into the k8s.io/api types\n", count)
}
