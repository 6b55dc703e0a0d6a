package kerberos_test

import (
	"context"
	"fmt"

	"github.com/stewardhq/steward/policy"
	"github.com/stewardhq/steward/web"
	"github.com/stewardhq/steward/web/kerberos"
)

// Reading an intranet page with the user's Kerberos ticket: the sign-in
// comes from KRB5_CONFIG and KRB5CCNAME, and web.Service decides hop by hop
// whether it may be sent.
func Example() {
	signIn, err := kerberos.New(kerberos.FromEnvironment())
	if err != nil {
		fmt.Println(err) // e.g. the ticket cache is of type KCM
		return
	}
	svc := web.NewService(web.ServiceOptions{})
	page, err := svc.Retrieve(context.Background(), "https://wiki.corp.example/handbook", web.Options{
		Policy:               web.AllowList,
		IsPrivateHostAllowed: func(host string) bool { return host == "wiki.corp.example" },
		ProviderConfidence:   policy.High,
		SignIn:               signIn,
	})
	if err != nil {
		fmt.Println(err) // e.g. web.ErrSignInRefused
		return
	}
	fmt.Println(page.Title, page.SignedIn)
}
