package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// ServiceAccountKubeconfig creates the ServiceAccount namespace/name
// (unless it exists), asks the apiserver for a token of it (TokenRequest,
// an hour), and writes dir/<namespace>-<name>.kubeconfig, which
// authenticates with that token and defaults to namespace. Whoever uses
// it is that ServiceAccount, with only the rights RBAC binds to it, as a
// pod or a CI job of a namespace user would be.
func (a *APIServer) ServiceAccountKubeconfig(ctx context.Context, dir, namespace, name string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := a.Client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating ServiceAccount %s/%s: %w", namespace, name, err)
	}
	cs, err := kubernetes.NewForConfig(a.Env.Config)
	if err != nil {
		return "", err
	}
	token, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token of ServiceAccount %s/%s: %w", namespace, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: a.Env.Config.Host, CertificateAuthorityData: a.Env.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: name, Namespace: namespace}
	cfg.CurrentContext = "envtest"
	path := filepath.Join(dir, namespace+"-"+name+".kubeconfig")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing the kubeconfig of ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return path, nil
}
